"""The one evaluator (thm3.semantics.evaluate): its two drivers, `Compiled` (a fixed
schedule for many environments) and `Memo` (nodes remembered across terms), give what
`evaluate` gives, on the NumPy, Python and SymPy tables."""
from __future__ import annotations

import numpy as np
import sympy as sp

from thm3.ir import Expr, Op, Type, const, var
from thm3.semantics.evaluate import NUMPY, PYTHON, Compiled, Memo, evaluate, quiet, rows
from thm3.semantics.sympy_table import SYMPY

X, Y = var("x", Type.REAL), var("y", Type.REAL)


def _bin(op, a, b, type_=Type.REAL):
    return Expr(op, type_, (a, b))


SHARED = _bin(Op.MUL, _bin(Op.ADD, X, Y), _bin(Op.ADD, X, Y))     # two distinct nodes
SQ = Expr(Op.POW, Type.REAL, (_bin(Op.SUB, X, const(1.0)),), 2)
TERMS = [
    _bin(Op.ADD, SQ, SHARED),
    Expr(Op.WHERE, Type.REAL, (_bin(Op.GT, X, Y, Type.BOOL), SQ, _bin(Op.DIV, Y, X))),
    _bin(Op.MAX, Expr(Op.EXP, Type.REAL, (X,)), SQ),
]


def test_compiled_and_memo_agree_with_evaluate():
    env = {"x": 0.75, "y": -2.0}
    want = evaluate(TERMS, env, PYTHON)
    assert Compiled(TERMS, PYTHON)(env) == want
    memo = Memo(env, PYTHON)
    assert [memo.value(t) for t in TERMS] == want
    assert want[0] == (0.75 - 1) ** 2 + (0.75 - 2.0) ** 2
    assert want[1] == (0.75 - 1) ** 2


def test_memo_computes_a_shared_node_once():
    calls = []
    table = dict(PYTHON)
    table[Op.SUB] = lambda a, b: calls.append(1) or a - b
    memo = Memo({"x": 3.0, "y": 1.0}, table)
    for t in TERMS:
        memo.value(t)
    assert len(calls) == 1                    # SQ's x - 1, under three terms


def test_memo_keeps_no_value_of_a_failed_node():
    def div(a, b):
        if b == 0:
            raise ZeroDivisionError
        return a / b
    table = dict(PYTHON)
    table[Op.DIV] = div
    memo = Memo({"x": 0.0, "y": 1.0}, table)
    bad = _bin(Op.DIV, Y, X)
    try:
        memo.value(_bin(Op.ADD, SQ, bad))
        raised = False
    except ZeroDivisionError:
        raised = True
    assert raised
    assert memo.get(bad, "none") == "none"
    assert memo.value(SQ) == 1.0              # computed before the failure: kept


def test_rows_evaluates_every_row_like_one_numpy_call_each():
    xs = [np.array([1.0, -2.0]), np.array([0.5])]
    ys = [np.array([3.0, 4.0]), np.array([-1.0])]
    memo = Memo({"x": xs, "y": ys}, rows(NUMPY, 2))
    with quiet():
        got = memo.value(TERMS[1])
        for x, y, g in zip(xs, ys, got):
            np.testing.assert_array_equal(g, evaluate([TERMS[1]], {"x": x, "y": y}, NUMPY)[0])


def test_sympy_table_reads_arithmetic_exactly_and_nothing_else():
    x, y = sp.Symbol("x", real=True), sp.Symbol("y", real=True)
    got = evaluate(TERMS, {"x": x, "y": y}, SYMPY)
    assert sp.expand(got[0] - ((x - 1) ** 2 + (x + y) ** 2)) == 0
    assert got[1] is None                    # a selection has no SymPy value here
    assert evaluate([const(0.1)], {}, SYMPY)[0] == sp.Rational("0.1")
