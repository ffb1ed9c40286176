"""`thm3.ir.printer`: one printer, a table per reader (issue 24).  The report's texts come
from the tree, never from editing printed text."""
from __future__ import annotations

import thm3
from thm3.ir import Expr, Op, Type, const, var
from thm3.ir.printer import INVARIANT, LOOP, MATH, STATE, TRANSPORT, to_text
from thm3.syntax.frontend import parse_source

INFLOW = '''"""Tank: water in and out, the level's peak."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    inflow: Real = 0.0
    info: Real = 0.0


def left(acc: State, x: Real, y: Real) -> State:
    return State(acc.inflow + x, acc.info + y * 2.0)
'''


def _r(name: str) -> Expr:
    return var(name, Type.REAL)


def test_each_reader_writes_names_numbers_and_products_its_own_way():
    e = Expr(Op.ADD, Type.REAL, (Expr(Op.MUL, Type.REAL, (_r("a.inflow"), _r("b.info"))), const(float("-inf"))))
    assert to_text(e) == to_text(e, LOOP) == "a.inflow * b.info + -inf"
    assert to_text(e, MATH) == "inflow₁·info₂ + −∞"
    bound = Expr(Op.GE, Type.BOOL, (_r("acc.inflow"), const(-2.0)))
    assert to_text(bound, INVARIANT) == "inflow >= -2"
    assert to_text(Expr(Op.GE, Type.BOOL, (_r("acc.n"), const(2.5))), INVARIANT) == "n >= 2.5"
    assert to_text(bound, STATE) == "inflow >= -2.0"
    decay = Expr(Op.MUL, Type.REAL, (_r("acc.d"), Expr(Op.EXP, Type.REAL, (_r("acc.m"),))))
    assert to_text(decay, TRANSPORT) == "d·e^(m)"


def test_parentheses_are_the_loop_files_in_every_reader():
    s = Expr(Op.ADD, Type.REAL, (_r("a.x"), _r("b.x")))
    e = Expr(Op.MUL, Type.REAL, (s, Expr(Op.SUB, Type.REAL, (_r("a.y"), const(float("-inf"))))))
    assert to_text(e) == "(a.x + b.x) * (a.y - -inf)"
    assert to_text(e, MATH) == "(x₁ + x₂)·(y₁ - −∞)"
    # and the loop file's text parses back to the same node
    loop = parse_source(INFLOW)
    assert to_text(loop.left.outputs[1]) == "acc.info + y * 2.0"


def test_a_field_named_inflow_is_not_an_infinity_in_the_report():
    a = thm3.analyze_source(INFLOW, name="tank", timeout=30, lift=False)
    assert a.verdict == "homomorphism"
    text = a.report()
    assert "inflow: inflow₁ + inflow₂" in text and "info: info₁ + info₂" in text
    assert "∞low" not in text and "∞o" not in text
    assert "inflow' = inflow + x" in text


WELFORD_N_LAST = '''"""Welford with the count declared last."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    mean: Real = 0
    M2: Real = 0
    n: Int = 0


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    delta = x - acc.mean
    mean = acc.mean + delta / n
    return State(mean, acc.M2 + delta * (x - mean), n)
'''


def test_the_combine_as_code_runs_whatever_order_the_fields_are_declared_in():
    """The report's code names a field's new value only after assigning it: the count n
    that the mean and M2 read is spelled a.n + b.n where n comes last."""
    import math
    import random
    from collections import namedtuple
    from thm3.report import combine_code
    for text in (WELFORD_N_LAST, (thm3.sample_path("welford")).read_text()):
        a = thm3.analyze_source(text, name="w", timeout=30, lift=False)
        assert a.verdict == "homomorphism"
        code = combine_code(a)
        State = namedtuple("State", a.loop.field_names)
        scope = {"State": State, "max": max, "min": min, "exp": math.exp}
        exec(compile(code, "<the report's combine>", "exec"), scope)     # thm3's own text, not user input
        rng = random.Random(3)
        for _ in range(20):
            s, t = ({"n": rng.randint(1, 5), "mean": rng.uniform(-2, 2), "M2": rng.uniform(0, 3)} for _ in "ab")
            u, v = State(**s), State(**t)
            assert all(math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-12)
                       for x, y in zip(scope["combine"](u, v), a.combine(u, v))), code
