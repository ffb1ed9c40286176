"""The lifting search and the loop-file renderer it writes with.

For every catalog loop with an expected lift: a lift is found in under 10 s, with the
fewest fields; the lifted file parses; its original fields keep their values on random
lists (both loops folded by the reference fold); and the witness search finds nothing
on it.  Boyer-Moore majority gets an honest None.  The renderer round-trips every
sample: `parse_source(render_loop(...))` computes the same function."""
from __future__ import annotations

import ast
import time

import numpy as np
import pytest
from catalog import SAMPLES, SAMPLES_DIR

from thm3 import parse_file, parse_source
from thm3.semantics.evaluate import call
from thm3.ir import Expr, FieldDecl, Op, ParamDecl, Type, const, var
from thm3.lift import Lift, lift
from thm3.syntax.loopfile import render_loop
from thm3.semantics.equality import states_close
from thm3.semantics.samples import Domain, fold_left, fold_right
from thm3.analysis.witness import find_witness

LIFTING = [s for s in SAMPLES if s.lift == "expected"]
NO_LIFT = [s for s in SAMPLES if s.lift == "none"]

# The fewest fields that make each loop a homomorphism (what the search must not exceed).
SMALLEST = {"kadane": 2, "mts": 1, "is_sorted": 1, "brackets_ok": 1, "longest_ones": 2,
            "blocks_of_ones": 2, "atoi": 1, "zero_after_one": 1, "horner": 1, "ema": 1}

LINEAR_RECURRENCE = '''"""Linear recurrence y' = a * y + b, keeping y only."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    y: Real = 0     # the value so far


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.y + b)
'''


def _decls(fields):
    return [(f.name, f.type, f.default, f.comment) for f in fields]


def _expr(op, type_, *src):
    return Expr(op, type_, tuple(src))


def _add(a, b):
    return _expr(Op.ADD, Type.REAL, a, b)


def _random_lists(loop, count=60, seed=1):
    rng = np.random.default_rng(seed)
    dom = Domain(loop)
    for i in range(count):
        params = dom.params(rng, small=i % 2 == 0)
        yield dom.random_list(rng, params, int(rng.integers(0, 10)), small=i % 3 != 0), params


@pytest.fixture(scope="module")
def lifts() -> dict[str, tuple[Lift, float]]:
    out = {}
    for s in LIFTING + NO_LIFT:
        loop = parse_file(s.path)
        t0 = time.monotonic()
        res = lift(loop)
        out[s.name] = (res, time.monotonic() - t0)
    return out


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lift_found(sample, lifts):
    res, elapsed = lifts[sample.name]
    assert res.loop_text is not None, res.reason
    assert elapsed < 10.0, f"{sample.name}: {elapsed:.1f} s"
    assert len(res.added) == SMALLEST[sample.name], res.added
    assert res.witness is not None


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lift_keeps_the_original_fields(sample, lifts):
    res, _ = lifts[sample.name]
    loop = parse_file(sample.path)
    lifted = parse_source(res.loop_text, "<lifted>")
    k = len(loop.fields)
    assert _decls(lifted.fields[:k]) == _decls(loop.fields)
    assert len(lifted.fields) == k + len(res.added)
    assert lifted.right is None            # the lead adds right from the combine
    assert lifted.preconditions or not loop.preconditions
    for xs, params in _random_lists(loop):
        assert states_close(fold_left(loop, xs, params), fold_left(lifted, xs, params)[:k]), xs
        if loop.result is not None:
            a = call(loop.result, *fold_left(loop, xs, params), *params.values())
            b = call(lifted.result, *fold_left(lifted, xs, params), *params.values())
            assert states_close(tuple(a), tuple(b))


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lifted_loop_has_no_witness(sample, lifts):
    res, _ = lifts[sample.name]
    lifted = parse_source(res.loop_text, "<lifted>")
    assert find_witness(lifted, timeout=3.0, max_lists=12000, settings=3) is None


@pytest.mark.parametrize("sample", LIFTING, ids=lambda s: s.name)
def test_lifted_text_explains_itself(sample, lifts):
    res, _ = lifts[sample.name]
    doc = ast.get_docstring(ast.parse(res.loop_text))
    assert "Lifted by thm3" in doc and "h(" in doc
    for line in res.added:
        name = line.split(":", 1)[0]
        assert f"Added {name}:" in doc
        assert "left:" in line and f"{name}' =" in line


def test_majority_has_no_small_lift(lifts):
    res, elapsed = lifts["majority"]
    assert res.loop_text is None and res.added == []
    assert "no lift" in res.reason and res.witness is not None
    assert elapsed < 10.0


def test_expected_fields():
    by = {}
    for name in ("mts", "kadane", "atoi", "brackets_ok"):
        res = lift(parse_file(SAMPLES_DIR / f"{name}.py"))
        by[name] = parse_source(res.loop_text)
    assert by["mts"].field_names == ("t", "s")
    assert by["kadane"].field_names == ("m", "t", "s", "p")
    assert by["atoi"].field_names == ("v", "pw")
    # brackets_ok's depth already is the total: only the lowest prefix depth is added
    assert by["brackets_ok"].field_names == ("depth", "ok", "low")


def test_nothing_to_lift_for_a_homomorphism():
    res = lift(parse_file(SAMPLES_DIR / "sum.py"))
    assert res.loop_text is None and "nothing to lift" in res.reason


def test_linear_recurrence_keeps_the_product():
    loop = parse_source(LINEAR_RECURRENCE)
    res = lift(loop)
    lifted = parse_source(res.loop_text)
    assert lifted.field_names == ("y", "pw")
    assert "a" in res.added[0].split("left:")[1]


def test_prove_decides():
    loop = parse_file(SAMPLES_DIR / "mts.py")
    seen = []

    def refuse(lifted):
        seen.append(lifted.field_names)
        return False

    res = lift(loop, timeout=3.0, prove=refuse)
    assert res.loop_text is None and "not proved" in res.reason
    assert seen and seen[0] == ("t", "s")
    res = lift(loop, prove=lambda lifted: True)
    assert res.loop_text is not None and "proved" in res.reason


# --- the renderer ----------------------------------------------------------------------

@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.name)
def test_render_round_trip(sample):
    loop = parse_file(sample.path)
    text = render_loop(loop.title, "", loop.fields, loop.params, loop.elements, loop.left.outputs,
                       loop.right.outputs if loop.right else None, loop.result, loop.preconditions,
                       result_type=loop.result_type)
    back = parse_source(text, "<rendered>")
    assert _decls(back.fields) == _decls(loop.fields)
    assert [p.name for p in back.params] == [p.name for p in loop.params]
    assert back.elements == loop.elements
    assert back.result_type == loop.result_type
    for xs, params in _random_lists(loop, 25):
        assert states_close(fold_left(loop, xs, params), fold_left(back, xs, params))
        if loop.right is not None:
            assert states_close(fold_right(loop, xs, params), fold_right(back, xs, params))


def test_render_binds_shared_subterms_and_imports_what_it_uses():
    x = var("x", Type.REAL)
    s_new = _add(var("acc.s", Type.REAL), x)
    m_new = _expr(Op.MAX, Type.REAL, var("acc.m", Type.REAL), s_new)
    fields = [FieldDecl("s", Type.REAL, 0.0, "sum so far"), FieldDecl("m", Type.REAL, 0.0, "best prefix")]
    text = render_loop("Maximum prefix sum.", "", fields, [], [ParamDecl("x", Type.REAL)],
                       [s_new, m_new], result=var("acc.m", Type.REAL))
    assert "    s = acc.s + x\n    return State(s, max(acc.m, s))\n" in text
    assert "from thm3.lang import Real\n" in text
    assert "    s: Real = 0     # sum so far\n" in text
    loop = parse_source(text)
    assert loop.field_names == ("s", "m")


def test_render_parameters_preconditions_and_functions():
    alpha = var("alpha", Type.REAL)
    x = var("x", Type.REAL)
    decay = _expr(Op.SUB, Type.REAL, const(1.0), alpha)
    left = [_add(_expr(Op.MUL, Type.REAL, decay, var("acc.s", Type.REAL)), _expr(Op.MUL, Type.REAL, alpha, x)),
            _expr(Op.MUL, Type.REAL, var("acc.w", Type.REAL), decay)]
    pre = [_expr(Op.AND, Type.BOOL, _expr(Op.LT, Type.BOOL, const(0.0), alpha),
                 _expr(Op.LT, Type.BOOL, alpha, const(1.0)))]
    fields = [FieldDecl("s", Type.REAL, 0.0, "average"), FieldDecl("w", Type.REAL, 1.0, "decay weight")]
    text = render_loop("EMA", "With its weight.", fields, [ParamDecl("alpha", Type.REAL)],
                       [ParamDecl("x", Type.REAL)], left, result=_expr(Op.EXP, Type.REAL, var("acc.s", Type.REAL)),
                       preconditions=pre, param_comments={"alpha": "smoothing factor"})
    assert text.startswith('"""EMA\n\nWith its weight."""\n')
    assert "from thm3.lang import Real, exp\n" in text
    assert "alpha: Real     # smoothing factor\n" in text
    assert "    assert 0 < alpha < 1\n" in text
    assert "def result(acc: State) -> Real:\n    return exp(acc.s)\n" in text
    loop = parse_source(text)
    rng = np.random.default_rng(0)
    for _ in range(10):
        xs = [(float(v),) for v in rng.normal(size=5)]
        s, w = fold_left(loop, xs, {"alpha": 0.25})
        assert np.isclose(w, 0.75 ** 5)

