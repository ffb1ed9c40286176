"""Branch normalisation, run on `left` before synthesis: the same function written with
if/elif/else, `where`, nested conditionals or max/min reaches synthesis in one spelling.

Two rewrites, bottom-up: a select that picks one side of its own comparison is a max or
a min (`x if x > m else m` is max(x, m)), also with the same term added to both sides
(`u + w if u > v else v + w` is max(u, v) + w: the (max, +) spelling of a Viterbi step);
and inside a branch where the comparison
decides which side is the larger, that side, subtracted in an exp argument, is spelled
as the max (`exp(m - x)` under `x > m` is exp(m - max(x, m))), the form in which the
combine's stability guard (`1 if x == M else exp(x - M)`) applies.  A select whose
branches are equal is its branch.  Each rewrite keeps the value on every input."""
from __future__ import annotations

from dataclasses import replace

from thm3.ir.core import Expr, Fn, Loop, Op, Type

_LARGER_FIRST = (Op.GT, Op.GE)     # u > v: u is the max where it holds
_SMALLER_FIRST = (Op.LT, Op.LE)    # u < v: v is the max where it holds


def _max(u: Expr, v: Expr) -> Expr:
    return Expr(Op.MAX, u.type if u.type is v.type else v.type, (u, v))


def _respell_max(e: Expr, top: Expr, mx: Expr) -> Expr:
    """`e` with `top`, where it is subtracted inside an exp argument, read as `mx`."""
    memo: dict[int, Expr] = {}

    def go(x: Expr, in_exp: bool) -> Expr:
        key = id(x) * 2 + in_exp
        if key in memo:
            return memo[key]
        if x.op in (Op.EXP, Op.EXP2):
            src = (go(x.src[0], True),)
        elif in_exp and x.op is Op.SUB and x.src[1] is top:
            src = (go(x.src[0], True), mx)
        else:
            src = tuple(go(s, in_exp and x.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL)) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        memo[key] = out
        return out

    return go(e, False)


def normalize(exprs) -> tuple[Expr, ...]:
    memo: dict[int, Expr] = {}

    def go(x: Expr) -> Expr:
        got = memo.get(id(x))
        if got is not None:
            return got
        src = tuple(go(s) for s in x.src)
        out = x if all(a is b for a, b in zip(src, x.src)) else Expr(x.op, x.type, src, x.arg)
        if out.op is Op.WHERE:
            out = _select(out)
        memo[id(x)] = out
        return out

    return tuple(go(e) for e in exprs)


def _select(w: Expr) -> Expr:
    cond, t, f = w.src
    if t is f:
        return t
    if cond.op not in _LARGER_FIRST + _SMALLER_FIRST or cond.src[0].type is not cond.src[1].type:
        return w
    u, v = cond.src
    big, small = (u, v) if cond.op in _LARGER_FIRST else (v, u)   # where cond holds
    if t is big and f is small:
        return _max(u, v)
    if t is small and f is big:
        return Expr(Op.MIN, w.type, (u, v))
    shift = _common_shift(t, f, big, small)
    if shift is not None and w.type is not Type.BOOL:
        pick, w_ = shift
        inner = _max(u, v) if pick else Expr(Op.MIN, w.type, (u, v))
        return Expr(Op.ADD, w.type, (inner, w_))
    mx = _max(u, v)
    t2 = _respell_max(t, big, mx)
    f2 = _respell_max(f, small, mx)
    if t2 is t and f2 is f:
        return w
    return Expr(Op.WHERE, w.type, (cond, t2, f2))


def _common_shift(t: Expr, f: Expr, big: Expr, small: Expr):
    """(True, w) where t = big + w and f = small + w (the select is max + w), (False, w)
    where t = small + w and f = big + w (min + w); else None.  `w` on either side of +."""
    if t.op is not Op.ADD or f.op is not Op.ADD:
        return None
    for i in (0, 1):
        for j in (0, 1):
            w_t, w_f = t.src[1 - i], f.src[1 - j]
            if not w_t is w_f:
                continue
            if t.src[i] is big and f.src[j] is small:
                return True, w_t
            if t.src[i] is small and f.src[j] is big:
                return False, w_t
    return None


def normalize_fn(fn: Fn) -> Fn:
    return Fn(fn.inputs, normalize(fn.outputs))


def normalize_loop(loop: Loop) -> Loop:
    """The loop with `left` normalised (the same function; `right` and `result` kept)."""
    left = normalize_fn(loop.left)
    if all(a is b for a, b in zip(left.outputs, loop.left.outputs)):
        return loop
    return replace(loop, left=left)
