"""Deciding d == 0 for a rational function d (a SymPy expression over +, *, integer
powers and rational numbers) without SymPy's `together`: the expression is rebuilt
bottom-up as a sparse polynomial numerator over a factored denominator (a product of
polynomial factors with multiplicities, so sums over shared denominators such as
(n1 + n2)^k take their least common multiple, not their product).  d is identically
zero iff the numerator is the zero polynomial.  Pébay's fourth-moment associativity
(over a thousand operations) is decided in about 0.05 s this way, against seconds with
`together` and `Poly`.

Soundness: the answer "zero" is used on a symbolic path on which every denominator of
the law's terms was decided nonzero (a division by a term that may be 0 is split by
the explorer first), so the identity of rational functions gives the equality there."""
from __future__ import annotations

from sympy import QQ
from sympy.polys.rings import ring

from thm3.errors import NotRational

__all__ = ["rational_is_zero"]


def rational_is_zero(d) -> bool | None:
    """True if d is identically 0 as a rational function, False if it is not, None when
    d is not a rational function of its symbols (exp, log, fractional powers...)."""
    if d == 0:
        return True
    syms = sorted(d.free_symbols, key=str)
    if not syms:
        return None
    R, *gens = ring([str(s) for s in syms], QQ)
    gen_of = dict(zip(syms, gens))
    memo: dict = {}

    def key(p):
        return tuple(sorted(p.items()))

    def power(den, k):
        return {kk: (p, x * k) for kk, (p, x) in den.items()}

    def product(den):
        r = R.one
        for p, x in den.values():
            r = r * p ** x
        return r

    def go(e):
        got = memo.get(e)
        if got is not None:
            return got
        if e.is_Symbol:
            r = (gen_of[e], {})
        elif e.is_Rational:
            r = (R(QQ(int(e.p), int(e.q))), {})
        elif e.is_Add:
            parts = [go(a) for a in e.args]
            lcm: dict = {}
            for _, den in parts:
                for k, (p, x) in den.items():
                    if lcm.get(k, (p, 0))[1] < x:
                        lcm[k] = (p, x)
            num = R.zero
            for n, den in parts:
                f = R.one
                for k, (p, x) in lcm.items():
                    f = f * p ** (x - den.get(k, (p, 0))[1])
                num = num + n * f
            r = (num, lcm)
        elif e.is_Mul:
            num, den = R.one, {}
            for a in e.args:
                n, dn = go(a)
                num = num * n
                for k, (p, x) in dn.items():
                    den[k] = (p, den.get(k, (p, 0))[1] + x)
            r = (num, den)
        elif e.is_Pow and e.exp.is_Integer:
            n, den = go(e.base)
            k = int(e.exp)
            if k >= 0:
                r = (n ** k, power(den, k))
            elif n == 0:
                raise NotRational("a division by 0")
            elif n.is_ground:
                r = (product(den) ** -k * R(QQ(1) / n.LC) ** -k, {})
            else:
                r = (product(den) ** -k, {key(n): (n, -k)})
        else:
            raise NotRational(type(e).__name__)
        memo[e] = r
        return r

    try:
        num, _ = go(d)
    except (NotRational, RecursionError):
        return None
    return num == 0
