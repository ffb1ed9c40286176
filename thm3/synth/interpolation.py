"""Synthesis route "interpolation": polynomial and rational combines by linear algebra on
exact sampled pairs (h(xs), h(ys)) -> h(xs + ys).

For each field the ansatz is c * Q = P, with P a combination of the monomials (degree
<= 4) of both states' fields and the loop parameters and Q one of degree <= 1 (Q = 1:
a polynomial).  The system is solved in floating point on the monomials that are
linearly independent on the samples, the coefficients are read as small rationals, and
the fit is accepted only if it holds exactly on every sample.  A piecewise loop is fitted
per case: the samples are split by the outcomes of `left`'s comparisons, read on the two
states (acc.f as a.f or b.f; the element as a field of b), and each side is fitted again.
`equalities` uses the same linear algebra to find polynomial identities on reachable
states (n * mean = sum, a compensation term that stays 0).  The monomials and their
polynomials are `thm3.synth.polynomials`'s."""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from thm3.ir import COMPARISONS, Expr, Fn, Loop, Op, Type, const, initial_state, promote, substitute, var, walk
from thm3.semantics.evaluate import Compiled
from thm3.synth.exact import EXACT, NotRational, Row, as_float, exact_rows, rational_loop_reason, with_sentinel
from thm3.errors import Thm3Error
from thm3.synth.check import guard_for_stability
from thm3.synth.polynomials import exact_monomial_value, independent, monomial_values, monomials, poly

MAX_DEGREE = 4
MAX_DENOMINATOR_DEGREE = 1
MAX_CONDITIONS = 8
MAX_DEPTH = 3
DENOMINATOR_LIMIT = 1000
MAX_WIDTH = 240             # columns of one ansatz: bounds the linear algebra


@dataclass(frozen=True)
class Fit:
    """c = P / Q over named variables; a monomial is a tuple of exponents."""
    p: dict
    q: dict

    def expr(self, variables: list[tuple[str, Type]], field_type: Type) -> Expr:
        num = poly(self.p, variables, field_type)
        if len(self.q) == 1 and all(e == 0 for e in next(iter(self.q))):
            return num          # Q is the constant 1 (normalised below)
        return Expr(Op.DIV, Type.REAL, (num, poly(self.q, variables, Type.REAL)))


def fit_rows(exact: list[list[Fraction]], target: list[Fraction], nvars: int,
             max_degree: int = MAX_DEGREE) -> Fit | None:
    """The smallest ansatz c * Q = P (deg P <= max_degree) that holds exactly on all
    rows, or None."""
    n = len(target)
    cols = np.array([[as_float(x) for x in r] for r in exact]) if exact else np.zeros((0, nvars))
    t = np.array([as_float(x) for x in target])
    if all(x == target[0] for x in target):     # a constant on these rows
        return Fit({tuple([0] * nvars): target[0]}, {tuple([0] * nvars): Fraction(1)})
    for dq in range(MAX_DENOMINATOR_DEGREE + 1):
        qs = monomials(nvars, dq)
        for dp in range(1, max_degree + 1):
            ps = monomials(nvars, dp)
            width = len(ps) + len(qs)
            if width > min(MAX_WIDTH, 0.75 * n):
                break
            # solve on a subset of the rows, check the fit exactly on all of them
            sub = np.unique(np.linspace(0, n - 1, min(n, 2 * width + 40)).astype(int))
            fit = _solve(ps, qs, cols[sub], t[sub], exact, target)
            if fit is not None:
                return fit
    return None


def _solve(ps, qs, cols, t, exact, target) -> Fit | None:
    mp = monomial_values(ps, cols)
    mq = monomial_values(qs, cols) * t[:, None]
    m = np.concatenate([mp, mq], axis=1)
    finite = np.isfinite(m).all(axis=1)     # rows whose monomials overflow cannot be fitted in floats
    m, t = m[finite], t[finite]
    if not len(m):
        return None
    scale = np.abs(m).max(axis=0)
    scale[scale == 0] = 1
    ms = m / scale
    keep = independent(ms)
    kp = [j for j in keep if j < len(ps)]
    kq = list(range(len(ps), len(ps) + len(qs)))
    # The first c*q column that depends on the P columns and the earlier c*q columns
    # gives the relation c * (q - sum a_k q_k) = sum b_m p_m.
    for jq in kq:
        if jq in keep:
            continue
        basis = kp + [j for j in keep if len(ps) <= j < jq]
        if not basis:
            continue
        if len(keep) > len(t) - 20:
            return None             # nearly every target would lie in the span
        sol, *_ = np.linalg.lstsq(ms[:, basis], ms[:, jq], rcond=None)
        if np.abs(ms[:, basis] @ sol - ms[:, jq]).max() > 1e-7:
            continue
        coef = sol / scale[basis] * scale[jq]
        p_c, q_c = {}, {qs[jq - len(ps)]: Fraction(1)}
        ok = True
        for j, c in zip(basis, coef):
            r = Fraction(float(c)).limit_denominator(DENOMINATOR_LIMIT)
            if abs(float(r) - c) > 1e-6 * max(1.0, abs(c)):
                ok = False
                break
            if r == 0:
                continue
            if j < len(ps):
                p_c[ps[j]] = r
            else:
                q_c[qs[j - len(ps)]] = q_c.get(qs[j - len(ps)], Fraction(0)) - r
        if not ok:
            continue
        fit = _normalise(Fit(p_c, q_c))
        if _holds(fit, exact, target):
            return fit
    return None


def _normalise(fit: Fit) -> Fit:
    """A constant denominator is divided into the numerator."""
    if len(fit.q) == 1:
        (mono, c), = fit.q.items()
        if all(e == 0 for e in mono) and c != 0:
            return Fit({m: v / c for m, v in fit.p.items()}, {mono: Fraction(1)})
    return fit


def _holds(fit: Fit, exact, target) -> bool:
    for row, c in zip(exact, target):
        p = sum((v * exact_monomial_value(m, row) for m, v in fit.p.items()), Fraction(0))
        q = sum((v * exact_monomial_value(m, row) for m, v in fit.q.items()), Fraction(0))
        if c * q != p:
            return False
        if q == 0 and c != 0:      # the guard selects 0 where Q = 0
            return False
    return True


# -- extrema of linear terms -------------------------------------------------------

@dataclass(frozen=True)
class Extremum:
    """c = max (or min) of linear terms, each {monomial: coefficient}: the combine of a
    running maximum such as a longest run, max(a.best, b.best, a.trail + b.lead)."""
    op: Op
    terms: tuple

    def expr(self, variables: list[tuple[str, Type]], field_type: Type) -> Expr:
        parts = [poly(t, variables, field_type) for t in self.terms]
        out = parts[0]
        for e in parts[1:]:
            out = Expr(self.op, promote(out.type, e.type), (out, e))
        return out


def _linear_terms(variables: list[tuple[str, Type]]) -> list[dict]:
    """Each variable, and each sum of an a-field and a b-field (simplest first)."""
    nv = len(variables)
    unit = [tuple(int(k == i) for k in range(nv)) for i in range(nv)]
    out = [{unit[i]: Fraction(1)} for i in range(nv)]
    for i, (ni, _) in enumerate(variables):
        for j, (nj, _) in enumerate(variables):
            if ni.startswith("a.") and nj.startswith("b."):
                out.append({unit[i]: Fraction(1), unit[j]: Fraction(1)})
    return out


class Extrema:
    """The linear terms of `_linear_terms` on every sampled row, as integers (all values
    scaled by one common denominator), so that a max/min fit on a subset of rows is a
    few vectorised comparisons."""

    def __init__(self, exact: list[list[Fraction]], targets: list[list[Fraction]],
                 variables: list[tuple[str, Type]]):
        import math
        self.terms = _linear_terms(variables)
        den = 1
        for row in itertools.chain(exact, targets):
            for x in row:
                den = math.lcm(den, Fraction(x).denominator)
        self.den = den
        cols = [[int(Fraction(x) * den) for x in row] for row in exact]
        big = max((abs(v) for row in cols for v in row), default=0)
        self.ok = big < 2 ** 40 and bool(cols) and bool(self.terms)     # no numeric field: no terms
        if self.ok:
            m = np.array(cols, dtype=np.int64)
            self.values = np.stack([sum(int(c) * m[:, list(mono).index(1)] for mono, c in t.items())
                                    for t in self.terms])

    def fit(self, idx: list[int], target: list[Fraction]) -> "Extremum | None":
        """c = max(S) (or min(S)) on these rows, S the fewest terms that bound c on every
        row and together reach it on each; None when no such S exists."""
        if not self.ok or not idx:
            return None
        scaled = [int(Fraction(x) * self.den) for x in target]
        if any(abs(x) >= 2 ** 62 for x in scaled):
            return None         # beyond int64, and beyond every term (those are below 2**40 here)
        t = np.array(scaled, dtype=np.int64)
        v = self.values[:, idx]
        for op, bounded in ((Op.MAX, np.all(v <= t, axis=1)), (Op.MIN, np.all(v >= t, axis=1))):
            bound = np.flatnonzero(bounded)
            if bound.size < 2:
                continue
            reached = v[bound] == t
            if not bool(np.all(reached.any(axis=0))):
                continue
            # greedy cover: the term reaching c on the most rows not yet covered, simplest first
            open_rows = np.ones(len(idx), dtype=bool)
            chosen = []
            while open_rows.any():
                k = int(np.argmax((reached & open_rows).sum(axis=1)))
                chosen.append(int(bound[k]))
                open_rows &= ~reached[k]
            if len(chosen) > 1:
                return Extremum(op, tuple(self.terms[k] for k in sorted(chosen)))
        return None


# -- piecewise: conditions read from `left` ------------------------------------------

def conditions(loop: Loop) -> list[Expr]:
    """`left`'s comparisons on two states: acc.f read as a.f or b.f, an element read as
    a field of b of its type; each distinct condition once."""
    elements = {d.name for d in loop.elements}
    out: list[Expr] = []
    seen: set[Expr] = set()
    for e in walk(loop.left.outputs):
        if e.op not in COMPARISONS:
            continue
        names = {v.arg for v in walk([e]) if v.op is Op.VAR}
        used = sorted(names & elements)
        side_maps = [{f"acc.{f.name}": var(f"{s}.{f.name}", f.type) for f in loop.fields} for s in "ab"]
        choices = [_element_fields(loop, name) for name in used]
        for m in side_maps:
            for pick in itertools.product(*choices):
                mapping = dict(m) | dict(zip(used, pick))
                c = substitute([e], mapping)[0]
                if c not in seen and not {v.arg for v in walk([c]) if v.op is Op.VAR} <= {
                        d.name for d in loop.params}:
                    seen.add(c)
                    out.append((bool(used), c))
    # comparisons of the state alone (a.n == 0, a.lead == a.n) before those that read an
    # element as some field of b
    out.sort(key=lambda uc: uc[0])
    return [c for _, c in out][:4 * MAX_CONDITIONS]


def _element_fields(loop: Loop, name: str) -> list[Expr]:
    """The fields of b that may stand for the element `name` in a condition: those whose
    update takes the element as it is (a last or first element: `x`, or a branch `x`),
    else every non-Bool field."""
    def holds(e: Expr) -> bool:
        if e.op is Op.VAR and e.arg == name:
            return True
        if e.op is Op.WHERE:
            return holds(e.src[1]) or holds(e.src[2])
        if e.op in (Op.MAX, Op.MIN):
            return any(holds(s) for s in e.src)
        return False

    direct = [var(f"b.{f.name}", f.type) for f, out in zip(loop.fields, loop.left.outputs)
              if f.type is not Type.BOOL and holds(out)]
    return direct or [var(f"b.{f.name}", f.type) for f in loop.fields if f.type is not Type.BOOL]


def _tree(rows: list[int], conds: list[tuple[Expr, list[bool]]], fit_on, depth: int):
    """A fit for these rows, or a select on one condition with a fit on each side."""
    got = fit_on(rows)
    if got is not None:
        return got
    if depth >= MAX_DEPTH:
        return None
    for k, (cond, vals) in enumerate(conds):
        yes = [r for r in rows if vals[r]]
        no = [r for r in rows if not vals[r]]
        if not yes or not no:
            continue
        rest = conds[:k] + conds[k + 1:]
        t = _tree(yes, rest, fit_on, depth + 1)
        if t is None:
            continue
        f = _tree(no, rest, fit_on, depth + 1)
        if f is None:
            continue
        return (cond, t, f)
    return None


class Failed(Thm3Error):
    """The route found nothing; the message says why."""


# An infinite default (a last element -inf while empty) is read as +-SENTINEL in the
# exact samples: larger than any sampled value, so comparisons decide as with infinity.
SENTINEL = Fraction(10 ** 6)


def synthesize(loop: Loop, deadline: float, rows: list[Row] | None = None) -> Fn:
    """The interpolated combine; raises Failed with the reason."""
    why = rational_loop_reason(loop, infinities=True)
    if why:
        raise Failed(why)
    infinite = any(e.op is Op.CONST and e.type is not Type.BOOL and not isinstance(e.arg, bool)
                   and e.arg in (float("inf"), float("-inf"))
                   for e in walk(loop.left.outputs)) or any(
        f.type is not Type.BOOL and f.default in (float("inf"), float("-inf")) for f in loop.fields)
    table = with_sentinel(SENTINEL) if infinite else EXACT
    try:
        rows = exact_rows(loop, table=table) if rows is None else rows
    except NotRational as e:
        raise Failed(str(e)) from None
    if len(rows) < 50:
        raise Failed("too few lists satisfy the preconditions")
    numeric = [i for i, f in enumerate(loop.fields) if f.type is not Type.BOOL]
    flags = [i for i, f in enumerate(loop.fields) if f.type is Type.BOOL]
    params = [d for d in loop.params if d.type is not Type.BOOL]
    variables = [(f"{s}.{loop.fields[i].name}", loop.fields[i].type) for s in "ab" for i in numeric] + \
        [(d.name, d.type) for d in params]
    exact = [[r.a[i] for i in numeric] + [r.b[i] for i in numeric] + [r.params[d.name] for d in params]
             for r in rows]
    envs = [{f"{s}.{f.name}": v for s, st in (("a", r.a), ("b", r.b)) for f, v in zip(loop.fields, st)}
            | dict(r.params) for r in rows]
    conds = []
    for c in conditions(loop) + [var(f"{s}.{loop.fields[i].name}", Type.BOOL) for s in "ab" for i in flags]:
        try:
            f = Compiled([c], table)
            vals = [bool(f(env)[0]) for env in envs]
        except (NotRational, KeyError, TypeError):
            continue
        if any(vals) and not all(vals) and vals not in [v for _, v in conds]:
            conds.append((c, vals))
    conds = conds[:MAX_CONDITIONS]
    extrema = Extrema(exact, [[r.c[i] for i in numeric] for r in rows], variables)
    outs = []
    for i, fld in enumerate(loop.fields):
        if time.monotonic() > deadline:
            raise Failed("out of time")
        target = [r.c[i] for r in rows]
        if fld.type is Type.BOOL:
            def fit_flag(idx, target=target):
                return _fit_flag([envs[r] for r in idx], [target[r] for r in idx], loop, flags)

            tree = _tree(list(range(len(rows))), conds, fit_flag, 0)
            if tree is None:
                raise Failed(f"field {fld.name}: no flag, and/or of two flags or constant holds on the samples, "
                             f"even split by {len(conds)} condition(s) of left")
            outs.append(_build(tree, variables, fld.type))
            continue

        tree = None
        # degree by degree, each with its case splits: a low-degree piecewise fit is
        # found before the wide ansatz on all rows is tried
        for degree in range(1, MAX_DEGREE + 1):
            def fit_on(idx, target=target, degree=degree):
                if time.monotonic() > deadline:
                    return None
                rows_, target_ = [exact[r] for r in idx], [target[r] for r in idx]
                got = fit_rows(rows_, target_, len(variables), degree)
                if got is None and degree == 1:
                    got = extrema.fit(idx, target_)
                return got

            tree = _tree(list(range(len(rows))), conds, fit_on, 0)
            if tree is not None:
                break
        if tree is None:
            raise Failed(f"field {fld.name}: no c * Q = P with deg P <= {MAX_DEGREE}, deg Q <= "
                         f"{MAX_DENOMINATOR_DEGREE} holds on the samples, even split by "
                         f"{len(conds)} condition(s) of left")
        outs.append(_build(tree, variables, fld.type))
    if infinite:
        outs = [_unsentinel(e) for e in outs]
    names = tuple((f"a.{f.name}", f.type) for f in loop.fields) + \
        tuple((f"b.{f.name}", f.type) for f in loop.fields) + tuple((d.name, d.type) for d in loop.params)
    return Fn(names, tuple(guard_for_stability(e, loop) for e in outs))


@dataclass(frozen=True)
class FlagFit:
    """A Bool field's combine on some rows: a constant, a flag, or two flags and/or'ed."""
    expr_: Expr

    def expr(self, variables, field_type: Type) -> Expr:
        return self.expr_


def _fit_flag(envs: list[dict], target: list[bool], loop: Loop, flags: list[int]) -> FlagFit | None:
    if not target:
        return None
    if all(t == target[0] for t in target):
        return FlagFit(const(bool(target[0]), Type.BOOL))
    names = [f"{s}.{loop.fields[i].name}" for s in "ab" for i in flags]
    for n in names:
        if all(bool(e[n]) == t for e, t in zip(envs, target)):
            return FlagFit(var(n, Type.BOOL))
    for op, f in ((Op.AND, lambda x, y: x and y), (Op.OR, lambda x, y: x or y)):
        for n1, n2 in itertools.combinations(names, 2):
            if all(f(bool(e[n1]), bool(e[n2])) == t for e, t in zip(envs, target)):
                return FlagFit(Expr(op, Type.BOOL, (var(n1, Type.BOOL), var(n2, Type.BOOL))))
    return None


def _unsentinel(e: Expr) -> Expr:
    """The sentinel constants back to +-inf."""
    if e.op is Op.CONST and e.type is not Type.BOOL and not isinstance(e.arg, bool) and abs(e.arg) == SENTINEL:
        return const(float("inf") if e.arg > 0 else float("-inf"), Type.REAL)
    if not e.src:
        return e
    src = tuple(_unsentinel(x) for x in e.src)
    return e if all(a is b for a, b in zip(src, e.src)) else Expr(e.op, e.type, src, e.arg)


def _build(tree, variables, field_type: Type) -> Expr:
    if isinstance(tree, (Fit, Extremum, FlagFit)):
        return tree.expr(variables, field_type)
    cond, t, f = tree
    yes, no = _build(t, variables, field_type), _build(f, variables, field_type)
    return Expr(Op.WHERE, promote(yes.type, no.type), (cond, yes, no))


def equalities(loop: Loop, degree: int = 3, rows: list[Row] | None = None) -> list[dict]:
    """Polynomial identities P(state) = 0 on every sampled reachable state (exactly), as
    {monomial: coefficient} over the fields in order; the invariant stage may offer them
    as candidates (they still have to be proved inductive there)."""
    if rational_loop_reason(loop) or any(f.type is Type.BOOL for f in loop.fields):
        return []
    try:
        rows = exact_rows(loop, count=200) if rows is None else rows
    except NotRational:
        return []
    return _relations([list(r.c) for r in rows], len(loop.fields), degree)


def equality_invariants(loop: Loop, degree: int = 2, count: int = 200) -> list[tuple[Expr, Expr]]:
    """The polynomial identities over the fields and the loop parameters that hold on
    every sampled reachable state, as `P == 0` over acc.<field> and the parameters: n *
    mean == sum, a compensation that stays 0, a step-matrix power that commutes with the
    step (m_y_z == b * m_z_y).  Each comes with the sum of its terms' magnitudes (for a
    round-off tolerance on float samples).  Only identities that hold at init for every
    value of the parameters are offered (the samples may draw few of them: a weight
    0 < alpha < 1 is 1/2 in the pool); candidates only, the invariant stage keeps those it
    proves inductive."""
    if rational_loop_reason(loop) or any(f.type in (Type.BOOL, Type.VEC) for f in loop.fields):
        return []
    params = [d for d in loop.params if d.type in (Type.REAL, Type.INT)]
    try:
        rows = exact_rows(loop, count=count)
    except NotRational:
        return []
    points = [list(r.c) + [r.params[d.name] for d in params] for r in rows]
    nvars = len(loop.fields) + len(params)
    while degree > 1 and len(monomials(nvars, degree)) > len(points) // 2:
        degree -= 1
    rels = _relations(points, nvars, degree)
    variables = [(f"acc.{f.name}", f.type) for f in loop.fields] + [(d.name, d.type) for d in params]
    out = []
    zero: set[int] = set()      # variables found to be 0: their multiples say nothing more
    for rel in rels:
        if not any(any(m[:len(loop.fields)]) for m in rel):
            continue            # a relation among the parameters alone says nothing of the state
        if any(all(m[i] for m in rel) for i in zero):
            continue
        if len(rel) == 1:
            (mono,) = rel
            if sum(mono) == 1:
                zero.add(mono.index(1))
            else:
                continue        # f**2 == 0 without f == 0 first: not a fact of its own
        if not _zero_at_init(rel, loop, len(params)):
            continue
        magnitude = {m: abs(c) for m, c in rel.items()}
        absolute = [(n, t) for n, t in variables]
        out.append((Expr(Op.EQ, Type.BOOL, (poly(rel, variables, Type.REAL), const(0.0, Type.REAL))),
                    poly(magnitude, absolute, Type.REAL, absolute=True)))
    return out


def _zero_at_init(rel: dict, loop: Loop, nparams: int) -> bool:
    """P(init, params) is the zero polynomial in the parameters."""
    import sympy as sp
    from thm3.prove.rational import rational_is_zero
    init = [Fraction(e.arg) for e in initial_state(loop)]
    ps = sp.symbols(f"p0:{nparams}") if nparams else ()
    total = sp.Integer(0)
    for mono, c in rel.items():
        term = sp.Rational(c.numerator, c.denominator)
        for x, e in zip(init, mono[:len(init)]):
            term *= sp.Rational(x.numerator, x.denominator) ** e
        for x, e in zip(ps, mono[len(init):]):
            term *= x ** e
        total += term
    if total == 0:
        return True
    return bool(total.free_symbols) and rational_is_zero(total) is True


def _relations(points: list[list], nvars: int, degree: int) -> list[dict]:
    """The exact linear relations among the monomials (degree <= `degree`) on the points:
    each monomial that depends on the earlier ones, with its coefficients."""
    if not points:
        return []
    monos = monomials(nvars, degree)
    cols = np.array([[as_float(x) for x in s] for s in points])
    m = monomial_values(monos, cols)
    m = m[np.isfinite(m).all(axis=1)]       # points whose monomials overflow say nothing here
    if not len(m):
        return []
    scale = np.abs(m).max(axis=0)
    scale[scale == 0] = 1
    ms = m / scale
    keep = independent(ms)
    out = []
    for j in range(len(monos)):
        if j in keep:
            continue
        basis = [i for i in keep if i < j]
        if basis:
            sol, *_ = np.linalg.lstsq(ms[:, basis], ms[:, j], rcond=None)
            coef = sol / scale[basis] * scale[j]
        else:
            coef = []
        rel = {monos[j]: Fraction(1)}
        for i, c in zip(basis, coef):
            r = Fraction(float(c)).limit_denominator(DENOMINATOR_LIMIT)
            if r != 0:
                rel[monos[i]] = -r
        if all(sum((v * exact_monomial_value(mo, s) for mo, v in rel.items()), Fraction(0)) == 0 for s in points):
            out.append(rel)
    return out
