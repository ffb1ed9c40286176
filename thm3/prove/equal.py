"""Equality of a law's two sides on one path (`thm3.prove.paths`): by Z3 where the terms
are piecewise polynomial, else by SymPy algebra (rational functions, exp and log through
exp of both sides, remainders as opaque atoms) with the path's linear equalities solved
and substituted where that is exact, and Z3 deciding the case split.  Only a True answer
is used as a proof."""
from __future__ import annotations

import sympy as sp
import sympy.physics.units  # noqa: F401  (SymPy imports these on its first sum and its
import sympy.tensor.tensor  # noqa: F401  first solve: a fixed cost, paid with the import)
import z3

from thm3.prove.modular import congruent_remainders
from thm3.prove.rational import rational_is_zero
from thm3.semantics.symbolic import Explorer, Inf, Symbols, as_z3_bool, is_bool, isnan


def _z3_to_sympy(t, by_name: dict):
    """Arithmetic Z3 terms back to SymPy (for path equalities); None if not arithmetic.
    `by_name` maps a Z3 constant's name to its SymPy symbol (`_sympy_names`)."""

    def go(t):
        if z3.is_rational_value(t):
            return sp.Rational(t.numerator_as_long(), t.denominator_as_long())
        if z3.is_const(t):
            got = by_name.get(t.decl().name())
            if got is not None:
                return got
        args = [go(a) for a in t.children()]
        if any(a is None for a in args):
            return None
        if z3.is_to_real(t):                # an Int symbol, as `Symbols.real` makes it
            return args[0]
        if z3.is_add(t):
            return sp.Add(*args)
        if z3.is_mul(t):
            return sp.Mul(*args)
        if z3.is_sub(t):
            return args[0] - sp.Add(*args[1:])
        if z3.is_div(t):
            return args[0] / args[1]
        if t.decl().kind() == z3.Z3_OP_UMINUS:
            return -args[0]
        if t.decl().kind() == z3.Z3_OP_UNINTERPRETED and len(args) == 1 and t.decl().name() in _UF_SYMPY:
            return _UF_SYMPY[t.decl().name()](args[0])     # exp, log, ... as symbolic.py names them
        return None

    return go(t)


def _sympy_names(syms: Symbols) -> dict:
    """Z3 constant names to SymPy symbols: both are named by the operand's name with
    "." as "_" (`Symbols.real`); Bool operands have no SymPy symbol."""
    return {name.replace(".", "_"): s for name, s in syms.sympy_of.items()}


_UF_SYMPY = {"exp": sp.exp, "log": sp.log, "exp2": lambda x: sp.Integer(2) ** x,
             "log2": lambda x: sp.log(x, 2), "sqrt": sp.sqrt}


def _path_equalities(ex: Explorer, syms: Symbols) -> list:
    """The arithmetic equalities among the explorer's hypotheses and the path's literals,
    as SymPy differences.  The hypotheses' part is read once per explorer and symbols
    (every path of a law shares them; reading back 50 invariants on each of 300 paths
    was most of a many-field law's time)."""
    by_name = _sympy_names(syms)
    cached = getattr(ex, "_base_equalities", None)
    if cached is None or cached[0] is not syms or cached[1] != len(ex.base):
        cached = ex._base_equalities = (syms, len(ex.base), _equalities(ex.base, by_name))
    return cached[2] + _equalities(ex.path, by_name)


def _equalities(constraints, by_name: dict) -> list:
    eqs = []
    for c in constraints:
        if z3.is_not(c) and z3.is_distinct(c.arg(0)):
            c = c.arg(0).arg(0) == c.arg(0).arg(1)
        if z3.is_eq(c) and not z3.is_bool(c.arg(0)):
            lhs, rhs = _z3_to_sympy(c.arg(0), by_name), _z3_to_sympy(c.arg(1), by_name)
            if lhs is not None and rhs is not None:
                eqs.append(lhs - rhs)
    return eqs


# SymPy has no timeout; terms beyond this size are not attempted, so a law over them is
# "tested" rather than a hang (the caller's deadline bounds everything else).
_MAX_OPS = 600


def _is_zero(d) -> bool:
    """Decides d == 0 for rational functions (numerator as a sparse polynomial); with
    exp/log it normalises exp(a)*exp(b) = exp(a + b) first and falls back to simplify.
    Only a True answer is used as a proof."""
    if d == 0:
        return True
    got = rational_is_zero(d)       # rational functions: sparse polynomials, no size limit needed
    if got is not None:
        return got
    if sp.count_ops(d) > _MAX_OPS:
        return False          # too big for SymPy in bounded time: the law is left unproved
    try:
        if d.has(sp.Mod) and not d.has(sp.exp, sp.log) and not any(
                isinstance(f, sp.Function) and not isinstance(f, sp.Mod) for f in d.atoms(sp.Function)):
            # remainders (`%`) as opaque atoms: zero as a polynomial in them and the symbols
            # is zero; anything else is left to `congruent_remainders` and Z3 (SymPy's
            # simplify spends a tenth of a second a term on such differences and decides none)
            return _zero_with_opaque_remainders(d)
        if not d.has(sp.exp, sp.log, sp.Function) and not any(
                isinstance(p, sp.Pow) and not p.exp.is_Integer for p in d.atoms(sp.Pow)):
            num, _ = sp.fraction(sp.together(d))
            return sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero if num.free_symbols else num == 0
        e = sp.expand(sp.powsimp(sp.expand(d), combine="exp"))
        if e == 0:
            return True
        num, _ = sp.fraction(sp.together(e))
        if sp.expand(sp.powsimp(sp.expand(num), combine="exp")) == 0:
            return True
        return sp.simplify(e) == 0
    except (TypeError, ValueError, RecursionError, sp.PolynomialError):
        return False


def _zero_with_opaque_remainders(d) -> bool:
    mods = list(d.atoms(sp.Mod))
    opaque = {m: sp.Dummy(f"mod{i}") for i, m in enumerate(mods)}
    e = sp.expand(d.xreplace(opaque))
    if e == 0:
        return True
    if any(isinstance(p, sp.Pow) and not p.exp.is_Integer for p in e.atoms(sp.Pow)):
        return False
    num, _ = sp.fraction(sp.together(e))
    return sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero if num.free_symbols else num == 0


def exp_equal(l, r) -> bool:
    """l == r for real l, r with logs, through exp(l) == exp(r) (exp is injective):
    exp of a sum is a product, exp(log(u)) is u, and exp(k·a + ...) is U^k·... in fresh
    positive symbols U = exp(a), so the difference is a rational function whose
    numerator is decided as a polynomial.  Only a True answer is used as a proof."""
    if sp.count_ops(l) + sp.count_ops(r) > _MAX_OPS // 2:
        return False
    try:
        d = sp.expand(sp.exp(l), power_exp=True, mul=False, multinomial=False) - \
            sp.expand(sp.exp(r), power_exp=True, mul=False, multinomial=False)
        atoms = {}

        def factor(term):
            if term.is_number:
                return sp.exp(term)
            coeff, rest = term.as_coeff_Mul()
            if not (rest.is_Symbol and coeff.is_Rational):
                raise ValueError(term)
            return atoms.setdefault(rest, sp.Symbol(f"exp_{rest}", positive=True)) ** coeff

        subs = {e: sp.Mul(*(factor(t) for t in sp.Add.make_args(sp.expand(e.args[0]))))
                for e in d.atoms(sp.exp)}
        q = d.xreplace(subs)
        if q.has(sp.exp, sp.log):
            return False
        num, _ = sp.fraction(sp.together(q))
        num = sp.expand(num)
        return num == 0 or (bool(num.free_symbols) and sp.Poly(num, *sorted(num.free_symbols, key=str)).is_zero)
    except (TypeError, ValueError, RecursionError, sp.PolynomialError, AttributeError):
        return False


def _on_path(terms: tuple, eqs: list) -> tuple | None:
    """The terms with the path's equalities solved for one symbol each and substituted;
    None when the equalities contradict each other (a nonzero number must be 0: the path
    is infeasible in the reals, which Z3 with uninterpreted log cannot see)."""
    eqs = list(eqs[:8])
    while eqs:
        eq = eqs.pop(0)
        if _undefined(eq):
            # x/0 inside a path equality (Z3's division is total, SymPy's gives zoo):
            # no information, and above all no contradiction
            continue
        if eq.is_number:
            if eq != 0 and eq.is_zero is False:
                return None
            continue
        for x in sorted(eq.free_symbols, key=str):
            form = _linear_form(eq, x)                  # eq = k·x + rest, rest free of x
            if form is None or not form[0].is_number:
                continue
            k, rest = form
            sol = -rest / k
            terms = tuple(t.subs(x, sol) for t in terms)
            eqs = [sp.expand(e.subs(x, sol)) for e in eqs]
            break
    return terms


def _undefined(e) -> bool:
    return isinstance(e, sp.Basic) and e.has(sp.zoo, sp.nan, sp.oo, -sp.oo)


def _linear_form(eq, x) -> tuple | None:
    """(k, rest) with eq = k·x + rest, k and rest free of x and k not 0; else None (x
    under a function, a power or a denominator: no substitution is valid everywhere)."""
    e = sp.expand(eq)
    k = e.coeff(x)
    if k == 0 or k.has(x):
        return None
    rest = sp.expand(e - k * x)
    if rest.has(x):
        return None
    return k, rest


def sympy_zero(d, eqs, tried: bool = False, case_k_zero=None) -> bool:
    """d == 0 on a path with equalities eqs (`tried`: d alone is known not to be 0).

    An equality eq = k·s + rest (linear in s) gives s = -rest / k, which holds on the
    path only where k != 0.  With k a nonzero number the substitution is exact.  With k
    a term, the path splits: where k != 0 the substitution decides, and the case k == 0
    must be proved apart by `case_k_zero(k)` (Z3 on the path and k == 0; vacuous where
    the path already gives k != 0); without it, or where it fails, the substitution
    proves nothing.  Equations that are not linear in s (s * s == t, exp(s) == t,
    t * s == t solved "s = 1" though s is free where t == 0) are never solved:
    `sp.solve` drops the solutions that vanish a denominator or a factor, and a root it
    gives need not be the real one."""
    if not tried and _is_zero(d):
        return True
    for eq in eqs[:8]:
        if _undefined(eq):
            continue
        free = sorted(eq.free_symbols, key=str)
        for s in free:
            form = _linear_form(eq, s)
            if form is None:
                continue
            k, rest = form
            if not (k.is_number or case_k_zero is not None and case_k_zero(k)):
                continue
            d = d.subs(s, -rest / k)
            if _is_zero(d):
                return True
            break
    return False


def _sympy_to_z3(e, by_key: dict):
    """A polynomial SymPy term (symbols, rationals, + * and integer powers) as a Z3 term
    over the path's constants (`by_key`: SymPy symbol name to Z3 constant); else None."""
    if e.is_Rational:
        return z3.RealVal(str(e))
    if e.is_Symbol:
        return by_key.get(e.name)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 0:
        base = _sympy_to_z3(e.base, by_key)
        if base is None:
            return None
        out = base
        for _ in range(int(e.exp) - 1):
            out = out * base
        return out
    if isinstance(e, (sp.Add, sp.Mul)):
        args = [_sympy_to_z3(a, by_key) for a in e.args]
        if any(a is None for a in args):
            return None
        out = args[0]
        for a in args[1:]:
            out = out + a if isinstance(e, sp.Add) else out * a
        return out
    return None


def values_equal(ex: Explorer, l, r, syms: Symbols, eqs=None):
    """True if l == r holds on the path (NaN equals NaN, as the folds compare).
    `eqs`, where given, is a function giving the path's equalities (computed once for
    all the pairs of one path: the path does not change while they are checked)."""
    if isnan(l) or isnan(r):
        return isnan(l) and isnan(r)
    if isinstance(l, Inf) or isinstance(r, Inf):
        return isinstance(l, Inf) and isinstance(r, Inf) and l.sign == r.sign
    if is_bool(l) or is_bool(r):
        return ex.valid(as_z3_bool(l) == as_z3_bool(r)) is True
    if l.sp is not None and r.sp is not None:
        # the path's equalities only where a difference is not zero on its own (most are:
        # reading back a path's invariants costs more than the check that needs none)
        path_eqs = eqs if eqs is not None else _memo(lambda: _path_equalities(ex, syms))
        # logs first through exp of both sides (cheap), then SymPy's general route
        if l.sp.has(sp.log) or r.sp.has(sp.log):
            on_path = _on_path((l.sp, r.sp), path_eqs())
            if on_path is None or exp_equal(*on_path):
                return True
        if congruent_remainders(l.sp, r.sp):
            # two remainders by one modulus with congruent arguments (a rolling hash):
            # decided on the polynomials, before SymPy's general route spends seconds on
            # the difference of two remainders, which it cannot decide
            return True
        d = l.sp - r.sp
        if _is_zero(d):
            return True
        if path_eqs():
            # the path's linear equalities (invariants such as m_y_z == b * m_z_y) solved
            # for a symbol with a numeric coefficient and substituted: exact on the path
            on_path = _on_path((d,), path_eqs())
            if on_path is None or _is_zero(on_path[0]):
                return True
        def case_k_zero(k):
            # the other side of the split s = -rest / k: where k == 0 on the path, l == r
            # by Z3 (vacuous where the path gives k != 0)
            by_key = {name.replace(".", "_"): syms.z3_of[name] for name in syms.sympy_of}
            kz = _sympy_to_z3(k, by_key)
            return kz is not None and ex.valid(z3.Implies(kz == 0, l.z3 == r.z3)) is True

        if sympy_zero(d, path_eqs(), tried=True, case_k_zero=case_k_zero):
            return True
    return ex.valid(l.z3 == r.z3) is True


def _memo(fn):
    got: list = []

    def once():
        if not got:
            got.append(fn())
        return got[0]

    return once


def check_equal_pairs(ex, values, syms) -> bool:
    eqs = _memo(lambda: _path_equalities(ex, syms))
    return all(values_equal(ex, l, r, syms, eqs) for l, r in values)
