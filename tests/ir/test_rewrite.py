"""`thm3.ir.rewrite`: the shared IR-to-IR rules; each keeps the value bit for bit (the
special values are checked in tests/test_numba.py) and only touches what it is for."""
from __future__ import annotations

from thm3.ir import Expr, Op, Type, const, var, walk
from thm3.ir.rewrite import REWRITES, rewrite, shifted_exponentials


def _exp_count(outputs) -> int:
    return sum(e.op is Op.EXP for e in walk(outputs))


def test_two_shifted_exponentials_of_one_max_become_one():
    m, x = var("a.m", Type.REAL), var("x", Type.REAL)
    top = Expr(Op.MAX, Type.REAL, (m, x))
    first = Expr(Op.EXP, Type.REAL, (Expr(Op.SUB, Type.REAL, (m, top)),))
    second = Expr(Op.EXP, Type.REAL, (Expr(Op.SUB, Type.REAL, (x, top)),))
    out = rewrite([top, Expr(Op.ADD, Type.REAL, (first, second))])
    assert _exp_count(out) == 1 and _exp_count([first, second]) == 2
    assert out[0].op is Op.WHERE                                # the max is the select both read


def test_a_max_no_exponential_reads_keeps_its_spelling():
    m, x = var("a.m", Type.REAL), var("x", Type.REAL)
    top = Expr(Op.MAX, Type.REAL, (m, x))
    assert rewrite([top, Expr(Op.ADD, Type.REAL, (top, const(1.0)))])[0] is top
    assert shifted_exponentials([top]) == (top,)
    assert shifted_exponentials in REWRITES
