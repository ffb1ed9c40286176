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
