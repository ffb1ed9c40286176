"""The SymPy table for the evaluator (`thm3.semantics.evaluate`): a term's value as an
exact SymPy expression, with Real constants as the rationals their floats denote and
±inf as ±oo.  Where an op has no SymPy meaning here (booleans, selections, vectors) or
SymPy refuses the operands, the value is None, and None propagates.  The critical
values and the tidy spelling of a combine read terms through it."""
from __future__ import annotations

import math

import sympy as sp

from thm3.ir import COMPARISONS, Op, Type


def sympy_const(value, type_):
    if isinstance(value, bool) or type_ is Type.BOOL:
        return None
    v = float(value)
    if math.isinf(v):
        return sp.oo if v > 0 else -sp.oo
    return sp.Rational(repr(v)) if type_ is Type.REAL else sp.Integer(int(value))


def _binary(f):
    def g(a, b):
        if a is None or b is None:
            return None
        try:
            return f(a, b)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
    return g


def _unary(f):
    def g(a):
        if a is None:
            return None
        try:
            return f(a)
        except (TypeError, ValueError):
            return None
    return g


# arithmetic only: booleans, selections and vectors are None (no SymPy value).
SYMPY = {
    Op.CONST: sympy_const,
    Op.NEG: _unary(lambda a: -a),
    Op.ABS: _unary(sp.Abs),
    Op.EXP: _unary(sp.exp),
    Op.EXP2: _unary(lambda a: sp.Integer(2) ** a),
    Op.LOG: _unary(sp.log),
    Op.LOG2: _unary(lambda a: sp.log(a, 2)),
    Op.SQRT: _unary(sp.sqrt),
    Op.ADD: _binary(lambda a, b: a + b),
    Op.SUB: _binary(lambda a, b: a - b),
    Op.MUL: _binary(lambda a, b: a * b),
    Op.DIV: _binary(lambda a, b: a / b),
    Op.POW: lambda a, n: None if a is None else a ** n,
    Op.MAX: _binary(sp.Max),
    Op.MIN: _binary(sp.Min),
    Op.WHERE: lambda c, a, b: None,
    Op.DOT: lambda u, v: None,
    **{op: (lambda a, b: None) for op in COMPARISONS + (Op.AND, Op.OR)},
    Op.NOT: lambda a: None,
}
