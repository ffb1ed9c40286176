"""Local rewrites that keep IEEE meaning: constant folding, units of max/min/+/*, and
selects on constant conditions.  Used where thm3 writes terms for people to read
(the right fold it derives for a lifted loop)."""
from __future__ import annotations

import math

import numpy as np

from thm3.semantics.evaluate import NUMPY, evaluate, quiet
from thm3.ir import Expr, Op, Type, const


def _is(x: Expr, v) -> bool:
    return x.op is Op.CONST and not isinstance(x.arg, bool) and x.arg == v and not isinstance(v, bool)


def simplify(e: Expr) -> Expr:
    memo: dict[int, Expr] = {}

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
