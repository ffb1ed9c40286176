"""The prover's extended reals: Fin values carry SymPy and Z3 terms, Inf and NaN follow
IEEE rules, and a branch on a symbolic condition is explored on both sides."""
from __future__ import annotations

import time

import sympy as sp
import z3

from thm3.ir import Op, Type
from thm3.semantics.symbolic import NAN, Explorer, Fin, Inf, SymbolicTable, constant, isnan

R = Type.REAL


def _table(lazy: bool = False) -> SymbolicTable:
    return SymbolicTable(Explorer([], time.monotonic() + 30), lazy=lazy)


def test_constants():
    c = constant(0.5, R)
    assert isinstance(c, Fin) and c.sp == sp.Rational(1, 2)
    assert constant(float("inf"), R) == Inf(1) and constant(float("-inf"), R) == Inf(-1)
    assert isnan(constant(float("nan"), R))
    assert constant(True, Type.BOOL) is True and constant(3, Type.INT).sp == 3


def test_ieee_rules_for_infinities():
    t = _table()
    one = constant(1.0, R)
    assert t[Op.ADD](Inf(1), one) == Inf(1)
    assert isnan(t[Op.ADD](Inf(1), Inf(-1)))
    assert isnan(t[Op.SUB](Inf(-1), Inf(-1)))           # exp(-inf - -inf) is NaN in the fold
    assert t[Op.EXP](Inf(-1)).sp == 0
    assert t[Op.MAX](Inf(-1), one).sp == 1
    assert t[Op.NEG](Inf(1)) == Inf(-1)
    assert isnan(t[Op.MUL](NAN, one))


def test_arithmetic_on_finite_values_is_exact():
    t = _table()
    x = Fin(sp.Symbol("x", real=True), z3.Real("x"))
    got = t[Op.SUB](t[Op.MUL](x, constant(2.0, R)), x)
    assert sp.simplify(got.sp - sp.Symbol("x", real=True)) == 0


def test_a_symbolic_branch_is_explored_on_both_sides():
    """max(x, 0) on a free x: the explorer finds two feasible paths."""
    ex = Explorer([], time.monotonic() + 30)
    t = SymbolicTable(ex, lazy=False)
    x = Fin(sp.Symbol("x", real=True), z3.Real("x"))
    results = [t[Op.MAX](x, constant(0.0, R)) for _ in ex.paths()]
    assert len(results) == 2
    assert {str(r.sp) for r in results} == {"x", "0"}
    lazy = SymbolicTable(Explorer([], time.monotonic() + 30), lazy=True)[Op.MAX](x, constant(0.0, R))
    assert isinstance(lazy, Fin) and z3.is_expr(lazy.z3)
    s = z3.Solver()
    s.add(lazy.z3 < 0)
    assert s.check() == z3.unsat                           # max(x, 0) >= 0 for every x


def test_integer_comparisons_go_to_z3_over_the_ints():
    """Int symbols are ToReal(Int) terms; a comparison of two integral terms is told to
    Z3 over the Ints (equivalent, and decided where the mixed form is "unknown"), while a
    term with a real variable or a division stays as it is."""
    from thm3.semantics.symbolic import IntegerForm, Symbols
    syms = Symbols()
    i, j = syms.real("a.i", Type.INT).z3, syms.real("a.j", Type.INT).z3
    x = syms.real("a.x", R).z3
    form = IntegerForm()
    claim = z3.If(i > j, i, j) + 2 * i - 1 >= j - 3
    rewritten = form(claim)
    assert not any(z3.is_to_real(t) for t in _subterms(rewritten)), rewritten
    assert form(i < x).eq(i < x) and form(i / 2 > j).eq(i / 2 > j)
    for vi in range(-3, 4):                 # the same truth value at every integer point
        for vj in range(-3, 4):
            sub = [(z3.Int("a_i"), z3.IntVal(vi)), (z3.Int("a_j"), z3.IntVal(vj))]
            assert z3.is_true(z3.simplify(z3.substitute(claim, *sub))) == \
                z3.is_true(z3.simplify(z3.substitute(rewritten, *sub)))
    s = z3.Solver()
    s.add(form(2 * i == 3))                 # no integer solution: still none
    assert s.check() == z3.unsat


def _subterms(t):
    yield t
    for c in t.children():
        yield from _subterms(c)


def test_an_int_law_the_mixed_form_left_unknown_is_proved():
    """near_max_count_int's combine commutes over Int (`x > m - 1` is `x >= m` there): with
    `IsInt` on real symbols Z3 answered "unknown" after 5 s; over the Ints it is proved."""
    import thm3
    from corpus import CORPUS_DIR
    a = thm3.analyze(CORPUS_DIR / "near_max_count_int.py", lift=False, timeout=30)
    assert a.verdict == "homomorphism" and a.proofs["commutativity"] == "proved", a.proofs
    assert a.seconds < 5, a.seconds


def test_a_condition_read_twice_on_a_path_is_decided_once():
    """A shared subterm's condition (c = x > 0 read by two outputs) is one decision: two
    paths, not four, and the second read asks the solver nothing."""
    ex = Explorer([], time.monotonic() + 30)
    x = z3.Real("x")
    checks = []
    feasible = ex.feasible

    def counted(extra):
        checks.append(extra)
        return feasible(extra)

    ex.feasible = counted
    seen = []
    for _ in ex.paths():
        first = ex.decide(x > 0)
        second = ex.decide(x > 0)
        assert first == second
        seen.append(first)
    assert sorted(seen) == [False, True]
    assert len(checks) == 2                    # both sides of one decision, once


def test_the_path_stays_asserted_and_side_axioms_survive_its_scopes():
    """The path's literals stay on the solver from one check to the next, and are gone on
    the next path; a side axiom told inside a path holds on every later path."""
    ex = Explorer([], time.monotonic() + 30)
    x, y, u = z3.Real("x"), z3.Real("y"), z3.Real("u")
    found = []
    for _ in ex.paths():
        a = ex.decide(x > 0)
        b = ex.decide(y > x)
        if a and b:
            assert ex.valid(y > 0) is True            # from x > 0 and y > x on this path
            ex.add_side(u == 1)
        else:
            assert ex.valid(y > 0) is not True        # not from this path's literals
        found.append((a, b))
    assert len(found) == 4
    ex.pending = [[]]                                 # a new exploration on the same solver
    for _ in ex.paths():
        assert ex.valid(u == 1) is True               # the axiom, at the base now
        assert ex.valid(x > 0) is not True
