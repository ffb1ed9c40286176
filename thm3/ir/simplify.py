"""The one simplifier of the IR: local rewrites that keep IEEE meaning.

Always: selects and connectives on constant conditions (what synthesis needs once
sketch holes are filled with True).  With `arithmetic` (the default): constant folding
and the units of max/min/+/-/*, for terms that people read (the right fold derived for a
lifted loop, the lifted state's updates)."""
from __future__ import annotations

import math

import numpy as np

from thm3.ir.core import Expr, Op, Type, const
from thm3.semantics.evaluate import NUMPY, evaluate, quiet


def _is(x: Expr, v) -> bool:
    """x is the numeric constant v (never a Bool)."""
    return x.op is Op.CONST and not isinstance(x.arg, bool) and x.arg == v and not isinstance(v, bool)


def _is_bool(x: Expr, v: bool) -> bool:
    return x.op is Op.CONST and x.type is Type.BOOL and x.arg is v


def _logic(out: Expr, src: tuple) -> Expr:
    match out.op:
        case Op.WHERE if src[0].op is Op.CONST:
            return src[1] if src[0].arg else src[2]
        case Op.AND if _is_bool(src[0], True) or _is_bool(src[1], False):
            return src[1]
        case Op.AND if _is_bool(src[1], True) or _is_bool(src[0], False):
            return src[0]
        case Op.OR if _is_bool(src[0], False) or _is_bool(src[1], True):
            return src[1]
        case Op.OR if _is_bool(src[1], False) or _is_bool(src[0], True):
            return src[0]
        case Op.NOT if src[0].op is Op.CONST and src[0].type is Type.BOOL:
            return const(not src[0].arg)
    return out


def _units(out: Expr, src: tuple) -> Expr:
    match out.op:
        case Op.MAX if _is(src[0], -math.inf):
            return src[1]
        case Op.MAX if _is(src[1], -math.inf):
            return src[0]
        case Op.MIN if _is(src[0], math.inf):
            return src[1]
        case Op.MIN if _is(src[1], math.inf):
            return src[0]
        case Op.ADD if _is(src[0], 0) and src[1].type is out.type:
            return src[1]
        case Op.ADD | Op.SUB if _is(src[1], 0) and src[0].type is out.type:
            return src[0]
        case Op.MUL if _is(src[0], 1) and src[1].type is out.type:
            return src[1]
        case Op.MUL if _is(src[1], 1) and src[0].type is out.type:
            return src[0]
    return out


def _folded(out: Expr) -> Expr:
    """An operation on constants as its value (a NaN result stays unfolded)."""
    with quiet():
        v = np.asarray(evaluate([out], {}, NUMPY)[0]).item()
    if out.type is Type.BOOL:
        return const(bool(v), Type.BOOL)
    if out.type is Type.INT and float(v).is_integer():
        return const(int(v), Type.INT)
    if isinstance(v, float) and not math.isnan(v):
        return const(float(v), Type.REAL)
    return out


def simplify(e: Expr, *, arithmetic: bool = True, memo: dict | None = None) -> Expr:
    """`e` rewritten bottom-up; the result shares subterms as `e` does.  `memo` (id ->
    (term, result)) may be shared between calls on terms that share subterms."""
    memo = {} if memo is None else memo

    def go(x: Expr) -> Expr:
        got = memo.get(id(x))
        if got is not None and got[0] is x:
            return got[1]
        src = tuple(go(s) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if arithmetic and src and all(s.op is Op.CONST for s in src) and out.op is not Op.WHERE:
            out = _folded(out)
        else:
            out = _logic(out, src)
            if arithmetic and out.op is x.op:
                out = _units(out, src)
        memo[id(x)] = (x, out)
        return out

    return go(e)
