"""The SymPy table for the evaluator (`thm3.semantics.evaluate`): a term's value as an
exact SymPy expression, with Real constants as the rationals their floats denote and
±inf as ±oo.  Where an op has no SymPy meaning here (booleans, selections, vectors) or
SymPy refuses the operands, the value is None, and None propagates.  The critical
values and the tidy spelling of a combine read terms through it; `to_ir` reads SymPy
back into the IR."""
from __future__ import annotations

import math

import sympy as sp

from thm3.ir import COMPARISONS, Expr, Op, Type, const, var


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
    Op.POWN: _binary(lambda a, n: a ** n),
    Op.MOD: lambda a, m: None if a is None else sp.Mod(a, m),
    Op.MAX: _binary(sp.Max),
    Op.MIN: _binary(sp.Min),
    Op.WHERE: lambda c, a, b: None,
    Op.DOT: lambda u, v: None,
    **{op: (lambda a, b: None) for op in COMPARISONS + (Op.AND, Op.OR)},
    Op.NOT: lambda a: None,
}


def to_ir(x, types: dict, *, back: dict | None = None, want: Type = Type.REAL):
    """A SymPy expression (sums, products, integer powers, square roots, exp and log,
    an Int's remainder modulo a positive integer, rationals, symbols) back in the IR: the one converter, read by the tidy spelling, the
    weak right inverse and transport.  A symbol is `back[symbol]` when given there, else
    the variable `types` names, by its own name or with `__` read as `.` (the spelling the
    SymPy readers give `a.f`).  An integer is an Int constant when `want` is Int.  Raises
    ValueError on anything else."""
    def joined(a, b) -> Type:
        return Type.INT if a.type is Type.INT and b.type is Type.INT else Type.REAL

    def go(x):
        if x.is_Symbol:
            if back and x in back:
                return back[x]
            for name in (str(x), str(x).replace("__", ".")):
                if name in types:
                    return var(name, types[name])
            raise ValueError(f"cannot write {x} in the IR: no such variable")
        if x.is_Integer:
            return const(int(x), Type.INT) if want is Type.INT else const(float(int(x)), Type.REAL)
        if x.is_Rational:
            return const(float(x), Type.REAL)
        if x.is_Add:
            terms = [go(t) for t in x.as_ordered_terms()]
            out = terms[0]
            for t in terms[1:]:
                if t.op is Op.NEG:
                    out = Expr(Op.SUB, joined(out, t), (out, t.src[0]))
                else:
                    out = Expr(Op.ADD, joined(out, t), (out, t))
            return out
        if x.is_Mul:
            num, den = sp.fraction(x)
            if den != 1:
                return Expr(Op.DIV, Type.REAL, (go(num), go(den)))
            coeff, rest = x.as_coeff_Mul()
            if coeff == -1:
                r = go(rest)
                return Expr(Op.NEG, r.type, (r,))
            factors = [go(f) for f in x.as_ordered_factors()]
            out = factors[0]
            for f in factors[1:]:
                out = Expr(Op.MUL, joined(out, f), (out, f))
            return out
        if x.is_Pow and x.exp.is_Integer:
            if x.exp < 0:
                return Expr(Op.DIV, Type.REAL, (const(1.0), go(x.base ** -x.exp)))
            base = go(x.base)
            return Expr(Op.POW, base.type, (base,), int(x.exp))
        if x.is_Pow and x.exp == sp.Rational(1, 2):
            return Expr(Op.SQRT, Type.REAL, (go(x.base),))
        if isinstance(x, sp.Mod) and x.args[1].is_Integer and x.args[1] > 0:
            inner = to_ir(x.args[0], types, back=back, want=Type.INT)
            if inner.type is Type.INT:
                return Expr(Op.MOD, Type.INT, (inner,), int(x.args[1]))
        for f, op in ((sp.exp, Op.EXP), (sp.log, Op.LOG)):
            if isinstance(x, f) and len(x.args) == 1:
                return Expr(op, Type.REAL, (go(x.args[0]),))
        raise ValueError(f"cannot write {x} in the IR")

    return go(x)
