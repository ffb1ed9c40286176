"""Integer reasoning for `%` in the proofs: two remainders by one modulus are equal where
their arguments are congruent, decided by SymPy on the path's polynomials.  Z3 reads
`(a * b) % m` over integers as nonlinear arithmetic, which it rarely decides; the law of a
rolling hash (h * B + x) % p needs only that a remainder inside a ring term may be
replaced by its argument (a % m == a - m * floor(a / m), and the ring operations keep
congruence mod m)."""
from __future__ import annotations

import sympy as sp


def congruent_remainders(a, b) -> bool:
    """True if `a` and `b` (SymPy terms) are both `Mod(., m)` by one positive integer m
    and their arguments are congruent mod m: each argument a polynomial with integer
    coefficients in integer symbols and remainders by m (each replaced by its own
    argument, recursively), and the difference a polynomial whose coefficients m
    divides.  False where that is not shown (never a claim that they differ)."""
    if not (isinstance(a, sp.Mod) and isinstance(b, sp.Mod)) or a.args[1] != b.args[1]:
        return False
    m = a.args[1]
    if not (m.is_Integer and m > 0):
        return False
    p, q = reduced(a.args[0], m), reduced(b.args[0], m)
    if p is None or q is None:
        return False
    d = sp.expand(p - q)
    if d == 0:
        return True
    gens = sorted(d.free_symbols, key=str)
    try:
        poly = sp.Poly(d, *gens) if gens else None
    except sp.PolynomialError:
        return False
    coeffs = poly.coeffs() if poly is not None else [d]
    return all(c.is_Integer and c % m == 0 for c in coeffs)


def reduced(e, m):
    """`e` with every remainder by m inside it replaced by its argument: congruent to `e`
    mod m where `e` is a polynomial with integer coefficients in integer symbols and such
    remainders (what this checks); None where it is not."""
    mods = list(e.atoms(sp.Mod))
    top = [t for t in mods if not any(u is not t and u.has(t) for u in mods)]
    inner = {}
    for t in top:
        if t.args[1] != m:
            return None
        r = reduced(t.args[0], m)
        if r is None:
            return None
        inner[t] = r
    gens = sorted(e.free_symbols, key=str)
    if not all(s.is_integer for s in gens):
        return None
    try:
        poly = sp.Poly(e, *(list(top) + gens)) if top or gens else None
    except sp.PolynomialError:
        return None
    if poly is not None and not all(c.is_Integer for c in poly.coeffs()):
        return None
    if poly is None and not e.is_Integer:
        return None
    return sp.expand(e.xreplace(inner))
