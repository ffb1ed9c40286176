"""The one simplifier of the IR: local rewrites that keep IEEE meaning.

Always: selects and connectives on constant conditions (what synthesis needs once
sketch holes are filled with True).  With `arithmetic` (the default): constant folding
and the units of max/min/+/-/*, for terms that people read (the right fold derived for a
lifted loop, the lifted state's updates).  Given the names that hold finite numbers (`finite`: elements,
loop parameters), also `x - x` and `x * 0` over them, and their comparisons with +-inf
(over the reals of the proofs; IEEE would differ only where x overflows); and the
readable forms of Bool selects and of a max whose bound a guard gives."""
from __future__ import annotations

import math

import numpy as np

from thm3.ir.core import COMPARISONS, Expr, Op, Type, const, walk
from thm3.ir.monoids import is_unit, monoid
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
    """A number monoid's unit dropped (the table's), and x - 0.  A sum's or a product's
    other operand must have the result's type (0 + n, n an Int, is a Real); a max's or a
    min's is kept whatever its type."""
    m = monoid(out.op)
    if m is not None and not isinstance(m.identity, bool):
        for unit, other in ((src[0], src[1]), (src[1], src[0])):
            if is_unit(out.op, unit) and (m.idempotent or other.type is out.type):
                return other
    if out.op is Op.SUB and _is(src[1], 0) and src[0].type is out.type:
        return src[0]
    return out


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
            if c.op in (Op.GT, Op.GE) and c.src[0] is a and c.src[1].op is Op.CONST:
                low_a = max(low_a, float(c.src[1].arg))
            if c.op in (Op.LT, Op.LE) and c.src[0] is b and c.src[1].op is Op.CONST:
                low_b = max(low_b, float(c.src[1].arg))
            return min(low_a, low_b)
        case _:
            return -math.inf


def _readable(out: Expr, src: tuple, finite) -> Expr:
    """The rewrites for terms people read: cancellations over finite names, comparisons
    with +-inf, Bool selects as connectives, a max or min with itself or a known bound."""
    zero = {Type.REAL: const(0.0, Type.REAL), Type.INT: const(0, Type.INT)}
    match out.op:
        case Op.SUB if out.type in zero and src[0] is src[1] and _finite(src[0], finite):
            return zero[out.type]
        case Op.MUL if out.type in zero and (_is(src[0], 0) and _finite(src[1], finite)
                                             or _is(src[1], 0) and _finite(src[0], finite)):
            return zero[out.type]
        case Op.WHERE if src[1] is src[2]:
            return src[1]
        case op if op in COMPARISONS and any(_is_inf(t) for t in src) and all(
                _is_inf(t) or _finite(t, finite) for t in src):
            # a finite number against +-inf: the answer is that of any finite number
            probe = Expr(op, Type.BOOL, tuple(t if _is_inf(t) else const(0.0, Type.REAL) for t in src))
            return _folded(probe)
        case Op.EQ | Op.NE if src[0].type is Type.BOOL and src[1].op is Op.CONST:
            return src[0] if src[1].arg == (out.op is Op.EQ) else Expr(Op.NOT, Type.BOOL, (src[0],))
        case Op.WHERE if out.type is Type.BOOL and src[1].op is Op.CONST:
            c = src[0] if src[1].arg else Expr(Op.NOT, Type.BOOL, (src[0],))
            return Expr(Op.OR if src[1].arg else Op.AND, Type.BOOL, (c, src[2]))
        case Op.WHERE if out.type is Type.BOOL and src[2].op is Op.CONST:
            c = src[0] if not src[2].arg else Expr(Op.NOT, Type.BOOL, (src[0],))
            return Expr(Op.AND if not src[2].arg else Op.OR, Type.BOOL, (c, src[1]))
        case Op.MAX if src[0].op is Op.CONST and _lower(src[1]) >= _lower(src[0]):
            return src[1]
        case Op.MAX if src[1].op is Op.CONST and _lower(src[0]) >= _lower(src[1]):
            return src[0]
        case Op.MAX | Op.MIN if src[0] is src[1]:
            return src[0]
        case Op.MAX | Op.MIN if src[1].op is out.op and any(src[0] is t for t in src[1].src):
            return src[1]                    # max(a, max(a, b)) = max(a, b)
        case Op.MAX | Op.MIN if src[0].op is out.op and any(src[1] is t for t in src[0].src):
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


def simplify(e: Expr, *, arithmetic: bool = True, memo: dict | None = None, finite=frozenset()) -> Expr:
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
            if arithmetic and out.op is x.op:
                out = _readable(out, src, finite)
        memo[id(x)] = (x, out)
        return out

    return go(e)
