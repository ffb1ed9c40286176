"""Local rewrites that keep IEEE meaning: constant folding, units of max/min/+/*, and
selects on constant conditions.  Used where thm3 writes terms for people to read
(the right fold it derives for a lifted loop).  Given the names that hold finite numbers
(elements, loop parameters), `x - x` and `x * 0` over them are 0 as well (over the reals
of the proofs; IEEE would differ only where x overflows)."""
from __future__ import annotations

import math

import numpy as np

from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.ir import COMPARISONS, Expr, Op, Type, const, same, walk


def _is(x: Expr, v) -> bool:
    return x.op is Op.CONST and not isinstance(x.arg, bool) and x.arg == v and not isinstance(v, bool)


# Operations that keep finite operands finite over the reals.
_CLOSED = {Op.VAR, Op.CONST, Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.MAX, Op.MIN, Op.ABS, Op.WHERE,
           Op.LT, Op.LE, Op.GT, Op.GE, Op.EQ, Op.NE, Op.AND, Op.OR, Op.NOT}


def _finite(x: Expr, finite) -> bool:
    """Whether `x` is a finite number whenever the names in `finite` are."""
    for n in walk([x]):
        if n.op not in _CLOSED or n.type is Type.VEC:
            return False
        if n.op is Op.VAR and n.arg not in finite and n.type is Type.REAL:
            return False
        if n.op is Op.CONST and not isinstance(n.arg, bool) and not math.isfinite(float(n.arg)):
            return False
    return True


def _is_inf(x: Expr) -> bool:
    return x.op is Op.CONST and x.type is Type.REAL and math.isinf(float(x.arg))


def _lower(x: Expr) -> float:
    """A lower bound of `x` from its constants and the guards of its selects
    (`x if x > 0 else 0` is at least 0); -inf where none is known."""
    match x.op:
        case Op.CONST if not isinstance(x.arg, bool):
            return float(x.arg)
        case Op.MAX:
            return max(_lower(s) for s in x.src)
        case Op.MIN:
            return min(_lower(s) for s in x.src)
        case Op.ADD:
            return _lower(x.src[0]) + _lower(x.src[1])
        case Op.WHERE:
            c, a, b = x.src
            low_a, low_b = _lower(a), _lower(b)
            if c.op in (Op.GT, Op.GE) and same(c.src[0], a) and c.src[1].op is Op.CONST:
                low_a = max(low_a, float(c.src[1].arg))
            if c.op in (Op.LT, Op.LE) and same(c.src[0], b) and c.src[1].op is Op.CONST:
                low_b = max(low_b, float(c.src[1].arg))
            return min(low_a, low_b)
        case _:
            return -math.inf


def simplify(e: Expr, finite=frozenset()) -> Expr:
    memo: dict[int, Expr] = {}
    zero = {Type.REAL: const(0.0, Type.REAL), Type.INT: const(0, Type.INT)}

    def go(x: Expr) -> Expr:
        if id(x) in memo:
            return memo[id(x)]
        src = tuple(go(s) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if src and all(s.op is Op.CONST for s in src) and out.op is not Op.WHERE:
            with quiet():
                v = evaluate([out], {}, NUMPY)[0]
            v = np.asarray(v).item()
            if out.type is Type.BOOL:
                out = const(bool(v), Type.BOOL)
            elif out.type is Type.INT and float(v).is_integer():
                out = const(int(v), Type.INT)
            elif isinstance(v, float) and not math.isnan(v):
                out = const(float(v), Type.REAL)
        else:
            match out.op:
                case Op.MAX if _is(src[0], -math.inf):
                    out = src[1]
                case Op.MAX if _is(src[1], -math.inf):
                    out = src[0]
                case Op.MIN if _is(src[0], math.inf):
                    out = src[1]
                case Op.MIN if _is(src[1], math.inf):
                    out = src[0]
                case Op.ADD if _is(src[0], 0) and src[1].type is out.type:
                    out = src[1]
                case Op.ADD if _is(src[1], 0) and src[0].type is out.type:
                    out = src[0]
                case Op.MUL if _is(src[0], 1) and src[1].type is out.type:
                    out = src[1]
                case Op.MUL if _is(src[1], 1) and src[0].type is out.type:
                    out = src[0]
                case Op.SUB if out.type in zero and same(src[0], src[1]) and _finite(src[0], finite):
                    out = zero[out.type]
                case Op.MUL if out.type in zero and (_is(src[0], 0) and _finite(src[1], finite)
                                                     or _is(src[1], 0) and _finite(src[0], finite)):
                    out = zero[out.type]
                case Op.WHERE if same(src[1], src[2]):
                    out = src[1]
                case op if op in COMPARISONS and any(_is_inf(t) for t in src) and all(
                        _is_inf(t) or _finite(t, finite) for t in src):
                    # a finite number against +-inf: the answer is that of any finite number
                    probe = Expr(op, Type.BOOL, tuple(t if _is_inf(t) else const(0.0, Type.REAL) for t in src))
                    out = const(bool(np.asarray(evaluate([probe], {}, NUMPY)[0]).item()), Type.BOOL)
                case Op.EQ | Op.NE if src[0].type is Type.BOOL and src[1].op is Op.CONST:
                    out = src[0] if src[1].arg == (out.op is Op.EQ) else Expr(Op.NOT, Type.BOOL, (src[0],))
                case Op.WHERE if out.type is Type.BOOL and src[1].op is Op.CONST:
                    c = src[0] if src[1].arg else Expr(Op.NOT, Type.BOOL, (src[0],))
                    out = Expr(Op.OR if src[1].arg else Op.AND, Type.BOOL, (c, src[2]))
                case Op.WHERE if out.type is Type.BOOL and src[2].op is Op.CONST:
                    c = src[0] if not src[2].arg else Expr(Op.NOT, Type.BOOL, (src[0],))
                    out = Expr(Op.AND if not src[2].arg else Op.OR, Type.BOOL, (c, src[1]))
                case Op.MAX if src[0].op is Op.CONST and _lower(src[1]) >= _lower(src[0]):
                    out = src[1]
                case Op.MAX if src[1].op is Op.CONST and _lower(src[0]) >= _lower(src[1]):
                    out = src[0]
                case Op.MAX | Op.MIN if same(src[0], src[1]):
                    out = src[0]
                case Op.MAX | Op.MIN if src[1].op is out.op and any(same(src[0], t) for t in src[1].src):
                    out = src[1]                    # max(a, max(a, b)) = max(a, b)
                case Op.MAX | Op.MIN if src[0].op is out.op and any(same(src[1], t) for t in src[0].src):
                    out = src[0]
                case Op.WHERE if src[0].op is Op.CONST:
                    out = src[1] if src[0].arg else src[2]
                case Op.AND if src[0].op is Op.CONST:
                    out = src[1] if src[0].arg else src[0]
                case Op.AND if src[1].op is Op.CONST:
                    out = src[0] if src[1].arg else src[1]
                case Op.OR if src[0].op is Op.CONST:
                    out = src[0] if src[0].arg else src[1]
                case Op.OR if src[1].op is Op.CONST:
                    out = src[1] if src[1].arg else src[0]
        memo[id(x)] = out
        return out

    return go(e)
