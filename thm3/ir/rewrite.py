"""IR-to-IR rewrites that the array and scalar printers share, applied to a function's
outputs before it is lowered: each rule returns an expression that computes the same
value bit for bit (NaN and inf included) in fewer or cheaper operations.

`REWRITES` is the list, `rewrite(outputs)` applies it.  The Numba module and the JAX
module print the rewritten outputs.  The CUDA kernels and the emitted NumPy module do
not yet: their text is held by golden files and by the SASS budget of the kernels, and
a change there is measured on a GPU first (issue 24)."""
from __future__ import annotations

from thm3.ir.core import Expr, const, transform, walk
from thm3.ir.ops import Op, Type

# The branch condition under which max / min (as rendered by _max / _min) returns its
# first operand.
_PICKS_FIRST = {Op.MAX: Op.GT, Op.MIN: Op.LT}


def shifted_exponentials(outputs) -> tuple:
    """`exp(u - M)` with M = max(p, q) (or min) and u one of p, q, rewritten so that every
    such M costs one exponential instead of one per use: the log-sum-exp rescaling
    `d * exp(m - max(m, x)) + exp(x - max(m, x))` spends two per element otherwise.

    With c the condition under which M is p (`p > q or p != p`, exactly as `_max` picks):
        M          = p if c else q
        exp(p - M) = 1 + (p - p)    if c else exp(w)
        exp(q - M) = exp(w)         if c else 1 + (q - q)
    where w = (q - p if c else p - q) is computed, and exponentiated, once for all uses.
    Each branch is the original expression with M replaced by the operand it equals, and
    `exp(x - x)` is `1 + (x - x)` in IEEE arithmetic for every x (x - x is +0 for finite
    x, NaN for inf and NaN): the rewrite is exact, NaN and inf included, bit for bit.
    Real scalars only (a Vec's max is elementwise); exp2 likewise."""
    picks: dict[Expr, tuple] = {}           # M (interned: equal trees are one node) -> (c, M', p', q')
    shared: dict[tuple, Expr] = {}          # (M, exp op) -> exp(w)

    def pick(m: Expr, go):
        got = picks.get(m)
        if got is None:
            p, q = (go(s) for s in m.src)
            c = Expr(Op.OR, Type.BOOL, (Expr(_PICKS_FIRST[m.op], Type.BOOL, (p, q)),
                                         Expr(Op.NE, Type.BOOL, (p, p))))
            got = picks[m] = (c, Expr(Op.WHERE, Type.REAL, (c, p, q)), p, q)
        return got

    def candidate(e: Expr):
        """(M, u is M's first operand) for exp(u - M), else None."""
        if e.op not in (Op.EXP, Op.EXP2) or e.type is not Type.REAL or e.src[0].op is not Op.SUB:
            return None
        u, m = e.src[0].src
        if m.op not in _PICKS_FIRST or m.type is not Type.REAL or u.type is not Type.REAL:
            return None
        if any(s.type is not Type.REAL for s in m.src):
            return None
        if u is m.src[0]:
            return m, True
        if u is m.src[1]:
            return m, False
        return None

    # only the max / min that a shifted exponential reads become selects; the others keep
    # their spelling (the printers' max is the same pick)
    shifted = {found[0] for found in map(candidate, walk(outputs)) if found is not None}

    def rule(e: Expr, go):
        if e in shifted:
            return pick(e, go)[1]
        found = candidate(e)
        if found is None:
            return None
        m, first = found
        c, _, p, q = pick(m, go)
        k = (m, e.op)
        t = shared.get(k)
        if t is None:
            w = Expr(Op.WHERE, Type.REAL, (c, Expr(Op.SUB, Type.REAL, (q, p)),
                                           Expr(Op.SUB, Type.REAL, (p, q))))
            t = shared[k] = Expr(e.op, Type.REAL, (w,))
        x = p if first else q
        one = Expr(Op.ADD, Type.REAL, (const(1.0), Expr(Op.SUB, Type.REAL, (x, x))))
        return Expr(Op.WHERE, Type.REAL, (c, one, t) if first else (c, t, one))

    return transform(outputs, rule)


# The rules, in the order they apply.
REWRITES = (shifted_exponentials,)


def rewrite(outputs) -> tuple:
    """`outputs` with every rule of REWRITES applied."""
    outputs = tuple(outputs)
    for rule in REWRITES:
        outputs = tuple(rule(outputs))
    return outputs


__all__ = ["REWRITES", "rewrite", "shifted_exponentials"]
