"""Synthesis route "transport": a map psi onto a product of known monoids, found from
`left`'s exact samples, and combine = psi^-1(psi(a) + psi(b)).

A field whose value on xs + ys is max (min) of its values on xs and ys is its own
(max) ((min)) component.  The additive components are the polynomials phi of degree
<= 5 in the fields with phi(h(xs + ys)) = phi(h(xs)) + phi(h(ys)) on every sample: a
null space, computed in floating point, read as small rationals in reduced row echelon
form and checked exactly (Welford: n, n*mean, M2 + n*mean^2; nrm2: ssq*scale^2).  The
other fields are solved from psi(s) = t with SymPy; the combine is written as
a.f + b.f + (a factored rest), a quotient by a power of a max component as terms times
(w / max)^k, which stays bounded where the loop's own scaling keeps it bounded
(LAPACK's nrm2), and divisions are guarded by `guard_for_stability`."""
from __future__ import annotations

import itertools
import time
from fractions import Fraction

import numpy as np
import sympy as sp

from thm3.errors import SolverTimeout, Thm3Error
from thm3.ir import Expr, Fn, Loop, Op, Type, const, var
from thm3.prove.budget import within
from thm3.synth.exact import NotRational, as_float, exact_rows, rational_loop_reason
from thm3.synth.interpolation import DENOMINATOR_LIMIT, exact_monomial_value, monomial_values, monomials
from thm3.synth.check import guard_for_stability

MAX_DEGREE = 5


class Failed(Thm3Error):
    """No map onto known monoids was found; the message says why."""


def _sym(side: str, name: str) -> sp.Symbol:
    return sp.Symbol(f"{side}__{name}", real=True)


def laurent_monomials(k: int) -> list[tuple[int, ...]]:
    """Exponent tuples with a reciprocal in them, small first: f**-1, f**-2, g * f**-1,
    g**2 * f**-1, g * f**-2 (each exponent in -2..2, at most 3 in absolute value in all,
    at most two fields)."""
    out = []
    for total in (1, 2, 3):
        for i in range(k):
            for e in range(1, 3):
                if e == total:
                    m = [0] * k
                    m[i] = -e
                    out.append(tuple(m))
                for j in range(k):
                    if j != i and 1 <= total - e <= 2:
                        m = [0] * k
                        m[i], m[j] = -e, total - e
                        out.append(tuple(m))
    return list(dict.fromkeys(out))


def additive(rows, k: int, degree: int, monos: list | None = None) -> list[dict]:
    """Polynomials in the k fields (monomial -> Fraction) additive on every row; or, with
    `monos`, sums of those monomials (reciprocals among them: rows where one is undefined,
    a field 0 under a negative power, are left out of the fit and of the check)."""
    monos = [m for m in monomials(k, degree) if sum(m) > 0] if monos is None else monos
    a = np.array([[as_float(x) for x in r.a] for r in rows])
    b = np.array([[as_float(x) for x in r.b] for r in rows])
    c = np.array([[as_float(x) for x in r.c] for r in rows])
    with np.errstate(all="ignore"):
        mc = monomial_values(monos, c)
        m = mc - monomial_values(monos, a) - monomial_values(monos, b)
    finite = np.isfinite(m).all(axis=1) & np.isfinite(mc).all(axis=1)
    mc, m = mc[finite], m[finite]       # rows beyond float64 leave the float fit (the exact check reads them)
    if m.shape[0] < m.shape[1] + 10:    # too few rows left to fit (none at all: every row overflowed)
        return []
    # scaled by the monomials' own size: a column that is 0 (additive) must stay small
    scale = np.abs(mc).max(axis=0)
    scale[scale == 0] = 1
    ms = m / scale
    if ms.shape[0] < ms.shape[1] + 10:
        return []
    _, s, vt = np.linalg.svd(ms, full_matrices=False)
    tol = 1e-12 * s.max() if s.size else 0     # exact relations sit near 1e-16
    null = vt[np.sum(s > tol):]
    if null.shape[0] == 0:
        return []
    basis = null / scale                     # coefficients of the original monomials
    basis = _rref(basis)
    out = []
    for vec in basis:
        poly = {}
        for mono, x in zip(monos, vec):
            if abs(x) > 1e-9:
                r = Fraction(float(x)).limit_denominator(DENOMINATOR_LIMIT)
                if r != 0:
                    poly[mono] = r
        if not poly:
            continue
        defined = [r for r in rows[::3] if all(_defined(poly, st) for st in (r.a, r.b, r.c))]
        if len(defined) >= min(10, len(rows[::3])) and \
                all(_phi(poly, r.c) == _phi(poly, r.a) + _phi(poly, r.b) for r in defined) \
                and any(_phi(poly, st) != 0 for r in defined for st in (r.a, r.b)):
            # (one that is 0 on every state is a relation of the fields, `phase - phase ** 2`
            # for a phase in {0, 1}: additive, and no coordinate of psi, which no field can
            # be solved from; SymPy's solve spent 47 s of a 120 s analysis on four of them)
            out.append(poly)
    return out


def _defined(poly: dict, state) -> bool:
    """No field under a negative power is 0 in `state`."""
    return all(state[i] != 0 for m in poly for i, e in enumerate(m) if e < 0)


def singular(phis: list[dict]) -> list[int]:
    """The fields under a negative power in some component: psi is undefined where one is 0."""
    return sorted({i for p in phis for m in p for i, e in enumerate(m) if e < 0})


def _phi(poly: dict, state) -> Fraction:
    return sum((v * exact_monomial_value(m, state) for m, v in poly.items()), Fraction(0))


def _rref(mat: np.ndarray) -> np.ndarray:
    """Reduced row echelon form, pivots in column order (lower degrees first)."""
    mat = mat.copy()
    rows, cols = mat.shape
    r = 0
    for j in range(cols):
        if r == rows:
            break
        p = r + int(np.argmax(np.abs(mat[r:, j])))
        if abs(mat[p, j]) < 1e-8 * max(1.0, np.abs(mat).max()):
            continue
        mat[[r, p]] = mat[[p, r]]
        mat[r] /= mat[r, j]
        for i in range(rows):
            if i != r:
                mat[i] -= mat[i, j] * mat[r]
        r += 1
    return mat[:r]


def synthesize(loop: Loop, deadline: float, rows=None) -> tuple[Fn, str]:
    why = rational_loop_reason(loop)
    if why:
        raise Failed(why)
    if any(f.type is Type.BOOL for f in loop.fields):
        raise Failed("a Bool field: only +, max, min components are searched")
    if loop.params:
        raise Failed("loop parameters: the map would depend on them")
    try:
        rows = exact_rows(loop) if rows is None else rows
    except NotRational as e:
        raise Failed(str(e)) from None
    k = len(loop.fields)
    ordered = {}
    for i, f in enumerate(loop.fields):
        for op, pick in ((Op.MAX, max), (Op.MIN, min)):
            if all(r.c[i] == pick(r.a[i], r.b[i]) for r in rows):
                ordered[i] = op
                break
    rest = [i for i in range(k) if i not in ordered]
    phis: list[dict] = []
    # polynomials of rising degree, then with reciprocals (a harmonic mean: n and n / h add)
    for degree in list(range(1, MAX_DEGREE + 1)) + [-1]:
        if time.monotonic() > deadline:
            raise Failed("out of time")
        if degree < 0:
            monos = [m for m in monomials(k, 2) if sum(m) > 0] + laurent_monomials(k)
            phis = additive(rows, k, 2, monos) if rest else []
        else:
            phis = additive(rows, k, degree) if rest else []
        if len(phis) >= len(rest):
            for chosen in itertools.combinations(phis, len(rest)):
                got = _invert(loop, ordered, rest, list(chosen), rows, deadline)
                if got is not None:
                    return got
                if time.monotonic() > deadline:
                    raise Failed("out of time")
    raise Failed(f"{len(phis)} additive polynomial(s) of degree <= {MAX_DEGREE} (or of degree <= 2 with "
                 f"reciprocals) for {len(rest)} field(s) that are not max/min components; psi is not invertible")


def _invert(loop: Loop, ordered: dict, rest: list[int], phis: list[dict], rows,
            deadline: float) -> tuple[Fn, str] | None:
    fields = loop.fields
    s = [sp.Symbol(f"s{i}", real=True) for i in range(len(fields))]
    t = [sp.Symbol(f"t{j}", real=True) for j in range(len(phis))]

    def poly_expr(poly, vals):
        return sum(sp.Rational(v.numerator, v.denominator) * sp.prod([x ** e for x, e in zip(vals, m)])
                   for m, v in poly.items())

    eqs = [poly_expr(p, s) - tj for p, tj in zip(phis, t)]
    try:
        # SymPy's solve has no time limit of its own: a Groebner basis can run for hours
        sols = within(deadline, _solve, eqs, [s[i] for i in rest])
    except SolverTimeout:
        raise Failed("solving psi for the state ran past the deadline") from None
    except (NotImplementedError, ValueError):
        return None
    if not sols:
        return None
    a = [_sym("a", f.name) for f in fields]
    b = [_sym("b", f.name) for f in fields]
    tops = {i: sp.Symbol(f"M__{fields[i].name}", real=True) for i in ordered}
    subs = {s[i]: tops[i] for i in ordered}
    subs |= {tj: poly_expr(p, a) + poly_expr(p, b) for p, tj in zip(phis, t)}
    row = next((r for r in rows if all(x != 0 for x in r.a + r.b)), rows[-1])
    for sol in sols:
        if set(sol) != {s[i] for i in rest}:
            continue
        try:
            # cancel() has no time limit either: a large solution can take minutes
            exprs = within(deadline, _composed, sol, [(i, s[i]) for i in rest], subs)
        except SolverTimeout:
            raise Failed("simplifying psi^-1(psi(a) + psi(b)) ran past the deadline") from None
        if _matches(exprs, ordered, tops, fields, row, a, b):
            how = _describe(loop, ordered, phis)
            sing = singular(phis)
            if sing:
                how += ", the other side where " + " or ".join(f"{fields[i].name} == 0" for i in sing)
            return _to_fn(loop, ordered, tops, exprs, a, b, sing), how
    return None


def _solve(eqs, unknowns):
    return sp.solve(eqs, unknowns, dict=True)


def _composed(sol: dict, rest: list, subs: dict) -> dict:
    """Each field's solution with psi(a) + psi(b) (and the max/min tops) put in, over one
    denominator."""
    return {i: sp.cancel(sp.together(sol[x].subs(subs, simultaneous=True))) for i, x in rest}


def _matches(exprs, ordered, tops, fields, row, a, b) -> bool:
    env = {a[i]: sp.Rational(row.a[i].numerator, row.a[i].denominator) for i in range(len(fields))}
    env |= {b[i]: sp.Rational(row.b[i].numerator, row.b[i].denominator) for i in range(len(fields))}
    for i, op in ordered.items():
        env[tops[i]] = (max if op is Op.MAX else min)(env[a[i]], env[b[i]])
    try:
        return all(sp.simplify(e.subs(env) - sp.Rational(row.c[i].numerator, row.c[i].denominator)) == 0
                   for i, e in exprs.items())
    except (ZeroDivisionError, TypeError):
        return False


def _describe(loop: Loop, ordered: dict, phis: list[dict]) -> str:
    names = [f.name for f in loop.fields]
    parts = [f"{names[i]} -> {op.name.lower()}" for i, op in ordered.items()]
    for p in phis:
        parts.append(str(sum(sp.Rational(v.numerator, v.denominator) *
                             sp.prod([sp.Symbol(n) ** e for n, e in zip(names, m)]) for m, v in p.items())) + " -> +")
    return "transport onto (" + ", ".join(parts) + ")"


def _to_fn(loop: Loop, ordered, tops, exprs, a, b, sing: list[int] = ()) -> Fn:
    """The combine's IR.  Where psi has reciprocals (`sing`: the fields under a negative
    power), psi is undefined on a side with such a field 0; there the combine takes the
    other side (the identity, where the loop starts there), and elsewhere psi^-1(psi(a) +
    psi(b)): an output that reads a singular field is `b if a singular else a if b singular
    else ...`, so the identity never divides by 0."""
    fields = loop.fields
    names = tuple((f"a.{f.name}", f.type) for f in fields) + tuple((f"b.{f.name}", f.type) for f in fields)
    types = dict(names)
    top_ir = {i: Expr(ordered[i], fields[i].type, (var(f"a.{fields[i].name}", fields[i].type),
                                                    var(f"b.{fields[i].name}", fields[i].type)))
              for i in ordered}
    outs = []
    for i, f in enumerate(fields):
        if i in ordered:
            outs.append(top_ir[i])
            continue
        e = exprs[i]
        whole = _scaled(e, tops, top_ir, types, a, b)
        rest = sp.factor(sp.cancel(e - a[i] - b[i]))
        if whole is None and sp.count_ops(e) <= sp.count_ops(rest) + 2:
            whole = _plain_ir(e, tops, top_ir, types)
        if whole is None:
            own = Expr(Op.ADD, f.type, (var(f"a.{f.name}", f.type), var(f"b.{f.name}", f.type)))
            whole = own
            if rest != 0:
                ir = _plain_ir(rest, tops, top_ir, types)
                whole = Expr(Op.ADD, Type.REAL if Type.REAL in (f.type, ir.type) else f.type, (own, ir))
        whole = guard_for_stability(whole, loop)
        if sing and any(s in exprs[i].free_symbols for j in sing for s in (a[j], b[j])):
            whole = _other_side(whole, f, fields, sing)
        outs.append(whole)
    return Fn(names, tuple(outs))


def _other_side(whole: Expr, f, fields, sing: list[int]) -> Expr:
    def at_zero(side: str) -> Expr:
        conds = [Expr(Op.EQ, Type.BOOL, (var(f"{side}.{fields[j].name}", fields[j].type),
                                         const(0) if fields[j].type is Type.INT else const(0.0)))
                 for j in sing]
        out = conds[0]
        for c in conds[1:]:
            out = Expr(Op.OR, Type.BOOL, (out, c))
        return out

    mine = (var(f"a.{f.name}", f.type), var(f"b.{f.name}", f.type))
    inner = Expr(Op.WHERE, whole.type, (at_zero("b"), mine[0], whole))
    return Expr(Op.WHERE, whole.type, (at_zero("a"), mine[1], inner))


def _plain_ir(x, tops, top_ir, types) -> Expr:
    from thm3.ir import substitute
    from thm3.semantics.sympy_table import to_ir
    top_names = {str(v).replace("__", "."): i for i, v in tops.items()}
    ir = to_ir(x, types | {n: Type.REAL for n in top_names})
    return substitute([ir], {n: top_ir[i] for n, i in top_names.items()})[0]


def _scaled(x, tops, top_ir, types, a, b) -> Expr | None:
    """num / M^k written as sum of (term / w^k) * (w / M)^k where each term holds w^k,
    w a side of the max component M: no intermediate larger than the loop's own."""
    num, den = sp.fraction(sp.together(x))
    for i, top in tops.items():
        k = sp.degree(den, top) if den.has(top) else 0
        if k <= 0 or sp.simplify(den / top ** k).free_symbols:
            continue
        coeff = den / top ** k
        parts = []
        for term in sp.Add.make_args(sp.expand(num)):
            w = next((w for w in (a[i], b[i]) if sp.degree(term, w) >= k), None)
            if w is None:
                return None
            parts.append((sp.cancel(term / w ** k / coeff), w))
        out = None
        for body, w in parts:
            ratio = Expr(Op.DIV, Type.REAL, (var(str(w).replace("__", "."), types[str(w).replace("__", ".")]),
                                             top_ir[i]))
            scaled = Expr(Op.POW, Type.REAL, (ratio,), int(k)) if k > 1 else ratio
            term_ir = Expr(Op.MUL, Type.REAL, (_plain_ir(body, tops, top_ir, types), scaled))
            out = term_ir if out is None else Expr(Op.ADD, Type.REAL, (out, term_ir))
        return out
    return None


__all__ = ["Failed", "additive", "synthesize"]
