"""Finite control with linear data, the fits (`thm3.synth.finite`): the data fields of the
composed combine, what b's list adds from each control state (and its slopes) fitted as
exact linear forms in b's data on sampled folded lists: over the rationals, by the residue
of a count, or modulo m by elimination over GF(p) joined by the Chinese remainder theorem.
The prover decides every form."""
from __future__ import annotations

import itertools
import time

import numpy as np

from thm3.ir import Expr, Op, Type, const
from thm3.ir.simplify import simplify
from thm3.synth.powers import parameter_bases, read_power, read_power_product
from thm3.synth.finite_machine import Failed, Machine, show_state
from thm3.synth.finite_tables import add, expr_tree, linear_expr, where
from thm3.synth.finite_affine import (MODULUS, affine_form, affine_rows, coefficient_products, coefficients_determined,
                                      moduli, step_matrices, symbolic)
from thm3.synth.finite_walks import sampled_ends, start_state


def data_combine(m: Machine, by_state: dict, a: dict, b: dict, deadline: float, extra=(),
                  memo: dict | None = None) -> dict:
    """Each data field of the combine: d = sum over a's control state q of [a at q] *
    (A_q d_a + v_q), where A_q, the product of the step coefficients of b's list from
    q, is read off b's control state, and v_q, the data b's list adds from q (data 0),
    is fitted as a linear combination of b's data fields on folded lists (then proved)."""
    from thm3.semantics.samples import fold_left
    loop = m.loop
    fields = loop.fields
    nd = len(m.data)
    # the coefficients read off b's control state where they are equal for every word of f
    # (checked on the cells' generators: f's coefficients compose as the table does), else
    # fitted on b's data fields (a lift's slopes: 2 ** (steps in mode 1) from each mode,
    # lam ** (steps while running) where the coefficient is a parameter); once a machine
    # (`memo`: the refit rounds share them)
    memo = {} if memo is None else memo
    if "modulus" not in memo:
        rows = affine_rows(m)
        memo["determined"] = coefficients_determined(m, rows=rows)
        memo["modulus"] = moduli(m, rows)
        # the coefficient matrices of each transition function, from each control state
        memo["coef"] = coefficient_products(m, step_matrices(m, rows)) if memo["determined"] else None
    determined, modulus, coef = memo["determined"], memo["modulus"], memo["coef"]
    folded = sampled_ends(m, by_state, extra)
    out = {}
    slopes: dict = {}
    folds: dict = {}
    by_end: dict[int, list[int]] = {}       # end state r -> the folded lists that end in it, in order
    for n, (*_, r) in enumerate(folded):
        by_end.setdefault(r, []).append(n)
    data_rows = [row for _, _, row, _ in folded]
    # per control state, the data fields that are 0 on every sampled state there
    zero_at = {q: {j: all(data_rows[n][jj] == 0.0 for n in by_end.get(q, ())) and q in by_end
                   for jj, j in enumerate(m.data)} for q in range(len(m.states))}

    def folded_from(q: int, unit: int | None = None) -> list:
        """Each sampled list folded from control state q with the data 0 (or data field
        `unit` 1): every such start at once, as one batch of states a list (NumPy lanes),
        on the first call; the rest read the lanes."""
        if not folds:
            keys = [(qq, u) for qq in range(len(m.states)) for u in (None, *(() if determined else m.data))]
            starts = [start_state(m, qq, u) for qq, u in keys]
            batch = tuple(np.array([st[f] for st in starts]) for f in range(len(fields)))
            lanes = []
            for xs, params, _, _ in folded:
                end = fold_left(loop, xs, params, state=batch, dim=1)
                # one tuple of fields a start state, read off the lanes at once
                lanes.append(list(zip(*(np.broadcast_to(np.asarray(v), (len(keys),)) for v in end))))
            for n, key in enumerate(keys):
                folds[key] = [end[n] for end in lanes]
        return folds[(q, unit)]
    fits: dict = {}
    terms = [b[j] for j in m.data]
    # the step's coefficients that read loop parameters only (p, 1 - alpha), each with its
    # value on every folded list: the bases of a slope that is a power of a count of b
    base_values = parameter_bases(loop, {p.name: [params[p.name] for _, params, _, _ in folded]
                                         for p in loop.params if p.type is Type.REAL}, len(folded))

    def fitted(r, got: dict, fit, what: str, i: int, k: int):
        """`fit` of the points of end state r (of every end state where r is None), once for
        each fit and vector of values: the points' rows are the same folded lists every
        time, so the values decide the form (a lift's many slopes and copies repeat a few
        vectors).  The fit itself is part of the key (a residue split for the data, a plain
        linear form for the slopes: one's answer is not the other's).  A `Failed` is
        remembered and raised again."""
        pts = [p for pts in got.values() for p in pts] if r is None else got.get(r, [])
        key = (fit.__name__, r, fields[i].type, modulus[k], tuple(v for _, v in pts))
        if key not in fits:
            order = [n for ns in by_end.values() for n in ns] if r is None else by_end.get(r, [])
            bases = [(e, value[order]) for e, value in base_values]
            try:
                fits[key] = fit(m, pts, terms, fields[i].type, what, modulus[k], bases=bases)
            except Failed as err:
                fits[key] = err
        if isinstance(fits[key], Failed):
            raise fits[key]
        return fits[key]

    for k, i in enumerate(m.data):
        per_state: dict[int, dict[int, Expr]] = {}
        for r in by_state:
            per_state[r] = {}
        for q in range(len(m.states)):
            if time.monotonic() > deadline:
                raise Failed(f"recognised as {m.describe()}; time ran out fitting the data's forms")
            from_q = folded_from(q)
            got: dict[int, list] = {r: [(data_rows[n], float(from_q[n][i])) for n in ns] for r, ns in by_end.items()}
            what = f"the data b adds from {show_state(m, m.states[q])}"
            for r in by_state:
                if not got.get(r):
                    raise Failed(f"recognised as {m.describe()}; no sampled list reaches {show_state(m, m.states[r])}")
            # one form for every end state where one fits: the combine then does not split
            # on b's control where b's data already is what it adds (0 on the lists that
            # never leave a state that adds nothing), and its laws hold on every state the
            # invariants admit, not only on the reachable ones
            # b's own field first (what b adds from q, less what it adds from its own
            # start), then without it: where b's field is 0 or constant on every sampled
            # list that ends in a state, its coefficient is not determined there, and the
            # one it has from the start (1) is the form's, not 0 (a count of runs of five
            # that no sampled list ending in the state had; its laws decide)
            # (not for a field read modulo m: its fit searches small coefficients first, and
            # a lifted clamped walk mod 97 then read b's own copy where the proof needs the
            # form the search gives)
            shifted = {r: [(row, v - row[k]) for row, v in pts] for r, pts in got.items()} \
                if not modulus[k] else None
            joint = fitted(None, shifted, _fit_or_none, what, i, k) if shifted else None
            joint = _plus(joint, b[i], terms) if joint is not None else fitted(None, got, _fit_or_none, what, i, k)
            for r in by_state:
                if joint is not None:
                    per_state[r][q] = joint
                    continue
                own = fitted(r, shifted, _fit_or_none, what, i, k) if shifted else None
                per_state[r][q] = _plus(own, b[i], terms) if own is not None else \
                    fitted(r, got, _fit_by_residue, what, i, k)
            if not determined:
                # the slope of data field i in data field j from q: the fold from (q, e_j)
                # less the fold from (q, 0), fitted on b's data fields
                for jj, j in enumerate(m.data):
                    from_qj = folded_from(q, j)
                    if modulus[k]:
                        diffs = [float((int(hi[i]) - int(lo[i])) % modulus[k]) for lo, hi in zip(from_q, from_qj)]
                    else:
                        diffs = [float(hi[i]) - float(lo[i]) for lo, hi in zip(from_q, from_qj)]
                    got = {r: [(data_rows[n], diffs[n]) for n in ns] for r, ns in by_end.items()}
                    what = f"the slope of {fields[i].name} in {fields[j].name} from {show_state(m, m.states[q])}"
                    joint = fitted(None, got, _fit_or_none, what, i, k)
                    for r in by_state:
                        try:
                            fit = joint if joint is not None else fitted(r, got, _fit_linear, what, i, k)
                        except Failed:
                            if not zero_at[q].get(j):
                                raise
                            # a's field j is 0 on every sampled state at q (a lift's slope
                            # from the start, once a list has left it): its slope multiplies
                            # 0 there, and the prover decides the combine that says so
                            fit = const(0 if fields[i].type is Type.INT else 0.0, fields[i].type)
                        slopes.setdefault((r, q, k), {})[jj] = fit
        # combine: where over b's state r, then a's state q: A[f_r][q] row k . a.data + v
        leaves: dict[tuple, Expr] = {}
        for r, f in by_state.items():
            for q in range(len(m.states)):
                if determined:
                    arow = coef[f][q][k] if f in coef else np.eye(nd)[k]
                    lin = linear_expr([float(x) for x in arow] + [0.0], [a[j] for j in m.data], fields[i].type)
                else:
                    lin = None
                    for jj, j in enumerate(m.data):
                        s = slopes[(r, q, k)][jj]
                        if s.op is Op.CONST and float(s.arg) == 0.0:
                            continue
                        term = a[j] if s.op is Op.CONST and float(s.arg) == 1.0 else _mul(s, a[j])
                        lin = term if lin is None else add(lin, term)
                    lin = lin if lin is not None else const(0 if fields[i].type is Type.INT else 0.0, fields[i].type)
                leaves[(q, r)] = add(lin, per_state[r][q])
                if modulus[k]:
                    leaves[(q, r)] = Expr(Op.MOD, Type.INT, (leaves[(q, r)],), modulus[k])
        out[i] = expr_tree(m, list(leaves), leaves, a, b, deadline)
    return out


def _plus(form: Expr, own: Expr, terms: list) -> Expr:
    """form + own, as one linear form over `terms` where `form` is one (-own + 3 gives 3)."""
    lin = affine_form(form, {t.arg: n for n, t in enumerate(terms)})
    rest = None if lin is None else lin.get("")
    if lin is None or MODULUS in lin or any(symbolic(c) for k, c in lin.items() if k != "") or (
            rest is not None and rest.op is not Op.CONST):
        return simplify(add(form, own))
    coefs = [float(lin.get(n, 0.0)) + (1.0 if t.arg == own.arg else 0.0) for n, t in enumerate(terms)]
    return linear_expr(coefs + [float(rest.arg) if rest is not None else 0.0], list(terms), own.type)


def _mul(x: Expr, y: Expr) -> Expr:
    t = Type.INT if x.type is Type.INT and y.type is Type.INT else Type.REAL
    return Expr(Op.MUL, t, (x, y))


def independent_columns(mat: np.ndarray, tol: float = 1e-8) -> list[int]:
    """The columns of `mat` that are independent of the ones before them (Gram-Schmidt,
    twice): the simplest first, so that a fit over them is the sparse one."""
    kept, ortho = [], []
    for j in range(mat.shape[1]):
        r = mat[:, j].astype(float)
        norm = float(np.linalg.norm(r))
        if norm == 0.0:
            continue
        r = r / norm
        for _ in range(2):
            for q in ortho:
                r = r - (q @ r) * q
        if float(np.linalg.norm(r)) > tol:
            ortho.append(r / np.linalg.norm(r))
            kept.append(j)
    return kept


def _all_finite(values) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(values, dtype=float))))
    except OverflowError:           # an exact Int past the float range
        return False


def _fit_linear(m: Machine, pts: list, terms: list, type_: Type, what: str, modulus: int | None = None,
                integral: bool = False, bases=()) -> Expr:
    """The value of `pts` ((b's data fields and 1, value) pairs) as an exact linear form in
    `terms` and 1 (modulo `modulus`, where given: integer coefficients, the fewest terms
    first), or else as a power of a count among `terms` (`read_power`; `bases`: parameter
    coefficients with their values on the points); `Failed` where none fits (a lift is
    needed).  `integral`: integer coefficients only."""
    from fractions import Fraction
    if not pts:
        raise Failed(f"recognised as {m.describe()}; no sampled list for {what}")
    mat = np.array([p for p, _ in pts])
    rhs = np.array([v for _, v in pts])
    if not (_all_finite(mat) and _all_finite(rhs)):
        # a value that overflowed on the sampled lists (a gain compounded past 1e308): no
        # ratio or least-squares fit reads anything from it
        raise Failed(f"recognised as {m.describe()}; {what} reaches an infinite value on the sampled lists")
    if modulus is not None:
        try:
            # an exact form with integer coefficients holds modulo m too (no value wrapped);
            # one with a fraction does not (b.v / 2 over the integers, where v is reduced
            # mod m and 2 * slope == v: the slope is v times the inverse of 2, not v / 2)
            return _fit_linear(m, pts, terms, type_, what, integral=True)
        except Failed:
            return _fit_modular(m, mat, rhs, terms, type_, what, modulus)
    # the sparsest first: one field of b (or the constant) times a small rational, where
    # that fits, before a least-squares mix of columns that are dependent on these lists
    for j in [mat.shape[1] - 1] + list(range(mat.shape[1] - 1)):
        col = mat[:, j]
        if not np.any(col):
            continue
        ratio = float(Fraction(float(np.dot(col, rhs) / np.dot(col, col))).limit_denominator(1000))
        if integral and ratio != round(ratio):
            continue
        if ratio != 0.0 and np.allclose(ratio * col, rhs, rtol=1e-12, atol=1e-9):
            sol = np.zeros(mat.shape[1])
            sol[j] = ratio
            return linear_expr([float(x) for x in sol], terms, type_)
    # the independent columns only, in field order (b's fields equal on these lists, as
    # the copies of a state the list never left, give the first of them, not a third each)
    kept = independent_columns(mat)
    sol = np.zeros(mat.shape[1])
    if kept:
        part, *_ = np.linalg.lstsq(mat[:, kept], rhs, rcond=None)
        sol[kept] = part
    exact = np.array([float(Fraction(float(x)).limit_denominator(1000)) for x in sol])
    fits = np.allclose(mat @ exact, rhs, rtol=1e-12, atol=1e-9)
    if integral and not (fits and np.all(exact == np.round(exact))):
        raise Failed(f"recognised as {m.describe()}; {what} has no exact form with integer coefficients")
    if fits:
        sol = exact
    else:
        # a constant's power of a count of b (0.75 ** b.n_ping: a decay applied at each
        # step of one mode, which b counts), where that fits: before a linear form that
        # fits only to 1e-7 (0.99999 ** n is 1 - 1e-5 n to that on short lists)
        counts = {t.arg: mat[:, jj] for jj, t in enumerate(terms) if t.type is Type.INT and t.op is Op.VAR}
        power = None if type_ is not Type.REAL or integral else (
            read_power(rhs, counts, prefix="", bases=bases) or read_power_product(rhs, counts, prefix=""))
        if power is not None:
            return power
        if not np.allclose(mat @ sol, rhs, atol=1e-7):
            raise Failed(f"recognised as {m.describe()}; {what} is not linear in b's fields: a lift is needed")
        sol = np.array([round(float(x), 9) for x in sol])
    return linear_expr([float(x) for x in sol], terms, type_)


RESIDUES = (2, 3, 4)     # the moduli k of an Int field of b whose residue may choose the form


def _fit_by_residue(m: Machine, pts: list, terms: list, type_: Type, what: str, modulus: int | None,
                    bases=()) -> Expr:
    """`_fit_linear`, or where no one form fits, one form per residue of an Int field of b
    mod k (k in RESIDUES; a count whose parity carries a control state: the first sign of
    a list of sign changes is its last sign turned `changes` times), as a selection on
    `b.f % k`; `Failed` where neither fits."""
    try:
        return _fit_linear(m, pts, terms, type_, what, modulus, bases=bases)
    except Failed as err:
        failed = err
    for jj, t in enumerate(terms):
        if t.type is not Type.INT:
            continue
        for k in RESIDUES:
            classes: dict[int, list] = {}
            for p in pts:
                classes.setdefault(int(round(p[0][jj])) % k, []).append(p)
            if len(classes) < 2:
                continue
            forms = {c: _fit_or_none(m, part, terms, type_, what, modulus) for c, part in classes.items()}
            if any(f is None for f in forms.values()):
                continue
            first, *rest = forms.values()
            if all(first is f for f in rest):
                return first
            if len(classes) < k:
                continue                # a residue no sample has: its form is unknown
            residue = Expr(Op.MOD, Type.INT, (t,), k)
            out = forms[k - 1]
            for c in range(k - 2, -1, -1):
                out = where(Expr(Op.EQ, Type.BOOL, (residue, const(c, Type.INT))), forms[c], out)
            return out
    raise failed


MOD_COEFFICIENTS = (1, -1, 2, -2, 3, -3)
MOD_TERMS = 3           # nonzero terms at most in a linear form read modulo m


def _fit_modular(m: Machine, mat, rhs, terms: list, type_: Type, what: str, modulus: int) -> Expr:
    """`_fit_linear` modulo m: values that wrap around are no real linear form (b.h - b.pw
    from an init of 1).  One field of b with a small integer coefficient first (the form
    reads best), then the system solved exactly over Z/m: by elimination over GF(p) for
    each prime p of a square-free m, joined by the Chinese remainder theorem (the basic
    solution: b's fields in order as pivots, the others 0); for an m with a square factor
    (2**8), small integer coefficients on up to MOD_TERMS fields, the fewest first.  Each
    form comes with the constant the residues then share."""
    mat = np.rint(mat).astype(np.int64)
    rhs = np.rint(rhs).astype(np.int64)
    cols = mat.shape[1] - 1             # b's fields; the last column is the constant 1
    primes = _square_free_primes(modulus)
    most = 1 if primes is not None else min(MOD_TERMS, cols)
    for size in range(0, most + 1):
        for idx in itertools.combinations(range(cols), size):
            sub = mat[:, list(idx)]
            for coefs in itertools.product(MOD_COEFFICIENTS, repeat=size):
                rest = (rhs - sub @ np.array(coefs, dtype=np.int64)) % modulus
                if np.all(rest == rest[0]):
                    sol = np.zeros(cols + 1)
                    sol[list(idx)] = coefs
                    sol[cols] = float(rest[0])
                    return linear_expr([float(x) for x in sol], terms, type_)
    if primes is not None:
        got = solve_mod(mat, rhs, primes)
        if got is not None:
            half = modulus // 2
            return linear_expr([float(c - modulus if c > half else c) for c in got], terms, type_)
    raise Failed(f"recognised as {m.describe()}; {what} is not linear in b's fields modulo {modulus}: "
                 f"a lift is needed")


def _square_free_primes(n: int) -> list[int] | None:
    """The primes of n (>= 2, below 2**31) where n is square-free, else None."""
    if not 2 <= n < 2 ** 31:
        return None
    out, d = [], 2
    while d * d <= n:
        if n % d == 0:
            n //= d
            if n % d == 0:
                return None
            out.append(d)
        d += 1
    if n > 1:
        out.append(n)
    return out


def solve_mod(mat: np.ndarray, rhs: np.ndarray, primes: list[int]) -> list[int] | None:
    """x with mat @ x == rhs modulo the product of `primes` (distinct), as residues, or None
    where no x solves it: Gauss-Jordan elimination over each GF(p) (pivots left to right,
    free unknowns 0), then the Chinese remainder theorem.  Exact: int64 products of
    residues below 2**31."""
    n = mat.shape[1]
    out, mod = [0] * n, 1
    for p in primes:
        a = np.concatenate([mat % p, (rhs % p)[:, None]], axis=1).astype(np.int64)
        a = np.unique(a, axis=0)
        row, pivots = 0, []
        for c in range(n):
            if row == a.shape[0]:
                break
            nz = np.nonzero(a[row:, c])[0]
            if nz.size == 0:
                continue
            r = row + int(nz[0])
            a[[row, r]] = a[[r, row]]
            a[row] = a[row] * pow(int(a[row, c]), -1, p) % p
            factors = a[:, c].copy()
            factors[row] = 0
            a = (a - factors[:, None] * a[row][None, :]) % p
            pivots.append(c)
            row += 1
        if np.any(a[row:, n] != 0):
            return None                 # a row 0 == nonzero: inconsistent
        x = [0] * n
        for i, c in enumerate(pivots):
            x[c] = int(a[i, n])
        # CRT: join x (mod p) into out (mod `mod`)
        inverse = pow(mod, -1, p)
        out = [oi + mod * ((xi - oi) * inverse % p) for oi, xi in zip(out, x)]
        mod *= p
    return [o % mod for o in out]


def _fit_or_none(m: Machine, pts: list, terms: list, type_: Type, what: str, modulus: int | None = None,
                 bases=()) -> Expr | None:
    try:
        return _fit_linear(m, pts, terms, type_, what, modulus, bases=bases)
    except Failed:
        return None
