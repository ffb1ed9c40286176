"""Finite control with tropical data: the data fields of a machine (`thm3.synth.finite`)
whose updates are affine over (max, +) or (min, +) rather than (+, *).

In each control state and cell of the element, such a field's update is
d' = max(c_1 + d_1, ..., c_k + d_k, e) with coefficients c_j (the tropical one, 0, where
the field is kept; the zero, -inf, where it is reset; the element, in Kadane's
`acc.cur + x`) and a data-free rest e (the element, a constant).  A list's map of the
data from control state q is then one such map too, T_q(d) = A_q (x) d (+) v_q, with A_q
the product of the step matrices over the semiring and v_q = T_q(zero), the data the
list reaches from the zero (Mohri 2009, "Weighted automata algorithms": a weighted
automaton over a semiring composes its transitions).  The combine of two states is, for
a's control state q, T_q of b's list applied to a's data: A_q is read off b's transition
function where the state determines it (as for linear data), else each entry is fitted
on b's fields (a lift carries them: `slopes`); v_q is fitted on sampled lists as a
tropical form of b's fields by residuation (the greatest subsolution of
max_j (c_j + b_j) <= v, Cuninghame-Green 1979, "Minimax algebra"), its needless terms
dropped.  A leaf whose parts are no such forms is fitted whole on pairs of lists
(`_direct_leaf`).  The prover then decides the combine, as for any route.

Fields over different semirings may sit side by side (a peak and a total since a reset);
fields that read each other share one.

The same holds over (max, *) and (min, *) with nonnegative data (a peak that decays by 0.5
after a clip, a cheapest quote scaled by a rate while a market is open): the logarithm
maps them onto (max, +) and (min, +), so the fits read logarithms, the zero (0 under
max, +inf under min) stands for -inf and +inf, and the products along a list are read
off folds from a start scaled by 2 ** 500, exact to divide by."""
from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from thm3.ir import Expr, Op, Type, const, free_vars, initial_state, substitute, walk
from thm3.ir.simplify import simplify
from thm3.synth.finite import (Failed, Machine, affine_form, affine_rows, coefficient_products, composes,
                               data_steps, expr_tree, sampled_ends, show_state)
from thm3.synth.powers import read_exponential, read_power, read_power_product
from thm3.synth.semiring import (MAX_PLUS, MAX_TIMES_NONNEGATIVE, MIN_PLUS, MIN_TIMES, RING, Semiring,
                                 asserted_nonnegative, is_value, nonnegative, np_times, positive, scaling,
                                 semiring_form)

__all__ = ["GROUPS", "combine", "determined", "groups", "restricted", "slopes"]

# the semirings a group of data fields may be affine over, in the order they are tried:
# (max, *) only where its fields start at 0 or more and its coefficients and offsets are
# nonnegative (then every value is, and the fits read logarithms), (min, *) likewise
GROUPS = (RING, MAX_PLUS, MIN_PLUS, MAX_TIMES_NONNEGATIVE, MIN_TIMES)


def groups(m: Machine) -> dict[Semiring, tuple[int, ...]] | None:
    """The data fields by the semiring their updates are affine over: None where every one
    is affine over (+, *) (`affine_rows` holds), else {semiring: field indices}.  `Failed`
    where a field is affine over none of them, or fields that read each other are affine
    over no one semiring together."""
    try:
        affine_rows(m)
        return None
    except Failed as err:
        first = err
    loop = m.loop
    fields = loop.fields
    steps = data_steps(m)
    names = {f"acc.{fields[i].name}": i for i in m.data}
    by_name = {f"acc.{fields[i].name}": fields[i].name for i in m.data}
    reads: dict[tuple[int, Semiring], set[int]] = {}
    known = asserted_nonnegative(loop)
    strict = asserted_nonnegative(loop, strict=True)
    init = initial_state(loop)
    for k, i in enumerate(m.data):
        for s in GROUPS:
            if scaling(s) and not (init[i].op is Op.CONST and not isinstance(init[i].arg, bool)
                                           and float(init[i].arg) >= 0):
                continue
            got: set[int] = set()
            for exprs in steps.values():
                if s is RING:
                    lin = affine_form(exprs[k], names)
                    form = None if lin is None else {j: c for j, c in lin.items() if isinstance(j, int)}
                else:
                    row = _tropical_row(s, exprs[k], by_name)
                    if row is not None and scaling(s) and not _signed(s, row, known, strict):
                        row = None
                    form = None if row is None else {names[f"acc.{n}"]: c for n, c in row.items() if n != ""}
                if form is None:
                    break
                got |= set(form)
            else:
                reads[(i, s)] = got
    # fields that read each other share a semiring: each component of the reads (in either
    # direction) over the first semiring every field of it is affine over, reading only
    # fields of the component (a field kept or set in every step, affine over all three,
    # goes with the fields that read it)
    component = {i: i for i in m.data}

    def root(i):
        while component[i] != i:
            i = component[i]
        return i
    for (i, _s), js in reads.items():
        for j in js:
            component[root(i)] = root(j)
    of: dict[int, Semiring] = {}
    for c in {root(i) for i in m.data}:
        members = [i for i in m.data if root(i) == c]
        options = [s for s in GROUPS if all((i, s) in reads for i in members)]
        if not options:
            lone = [i for i in members if not any((i, s) in reads for s in GROUPS)]
            if lone or len(members) == 1:
                raise first
            raise Failed(f"recognised control ({', '.join(m.names(m.control))}); "
                         f"{', '.join(fields[i].name for i in members)} read each other but are affine over no "
                         f"one semiring together")
        of |= {i: options[0] for i in members}
    if all(s is RING for s in of.values()):
        raise first
    out: dict[Semiring, tuple[int, ...]] = {}
    for i in m.data:
        out[of[i]] = out.get(of[i], ()) + (i,)
    return out


def _signed(s: Semiring, row: dict, known: set[str], strict: set[str]) -> bool:
    """Whether a row over (max, *) or (min, *) keeps the data nonnegative: its offset and
    coefficients nonnegative, the coefficients positive over (min, *) (whose zero, +inf,
    IEEE multiplies by 0 into NaN where the semiring's zero absorbs)."""
    for n, c in row.items():
        if c is None:
            continue
        if n != "" and s.plus is Op.MIN:
            if not (c > 0 if isinstance(c, float) else positive(c, strict)):
                return False
        elif not (c >= 0 if isinstance(c, float) else nonnegative(c, known)):
            return False
    return True


def _tropical_row(s: Semiring, e: Expr, names: dict) -> dict | None:
    """`e` over `s` as {field name: its coefficient, "": the data-free rest or None}: a
    coefficient a float, or a data-free expression (the element: Kadane's `acc.cur + x`);
    None where `e` is no such form.  A field outside `names` (the control, or a copy of
    it in a lift: the weight of a phase copy's reading) is read as data-free, as the
    element is."""
    from thm3.ir.normalize import normalize
    (e,) = normalize([e])
    others = {n: Expr(Op.VAR, ty, (), "ctl." + n[4:]) for n, ty in _acc_vars(e) if n not in names}
    back = {"ctl." + n[4:]: Expr(Op.VAR, v.type, (), n) for n, v in others.items()}
    if others:
        (e,) = substitute([e], others)
    form = semiring_form(s, e, dict(names), e.type)
    if form is None:
        return None
    out = {}
    for k, c in form.items():
        c = simplify(c)
        if k == "":
            out[k] = None if is_value(c, s.zero) else (substitute([c], back)[0] if back else c)
        elif c.op is Op.CONST and not isinstance(c.arg, bool):
            if not is_value(c, s.zero):
                out[k] = float(c.arg)
        elif not any(n.startswith("acc.") for n in free_vars([c])):
            out[k] = substitute([c], back)[0] if back else c
        else:
            return None
    out.setdefault("", None)
    return out


def _acc_vars(e: Expr) -> list[tuple[str, Type]]:
    """The state's variables `e` reads (`acc.<field>`), with their types."""
    return sorted({(x.arg, x.type) for x in walk([e]) if x.op is Op.VAR and x.arg.startswith("acc.")},
                  key=lambda nt: nt[0])


# --- the combine ------------------------------------------------------------------------

def _product(s: Semiring):
    """The matrix product over `s` on the last two axes."""
    pick = np.max if s.plus is Op.MAX else np.min
    times = np_times(s)

    def product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pick(times(x[..., :, :, None], y[..., None, :, :]), axis=-2)
    return product


def _unit(s: Semiring, n: int) -> np.ndarray:
    out = np.full((n, n), float(s.zero))
    np.fill_diagonal(out, float(s.one))
    return out


def combine(s: Semiring, m: Machine, by_state: dict, a: dict, b: dict, deadline: float, extra=(),
            memo: dict | None = None, whole: Machine | None = None) -> dict:
    """Each data field of `m` (all over `s`) in the combine: over a's control state q and
    b's end state r, A_r[q] (x) a's data (+) v_q, v_q fitted on b's fields: those of every
    data field of `whole` (the machine `m` is a group of: b's streak of ones, a sum, is the
    slope of its trailing streak, over (max, +), where b is all ones)."""
    whole = m if whole is None else whole
    loop = m.loop
    fields = loop.fields
    nd = len(m.data)
    memo = {} if memo is None else memo
    if "coef" not in memo:
        coef, det = _coefficient_matrices(s, m)
        memo["coef"] = coef if det else None
    coef = memo["coef"]
    folded = sampled_ends(whole, by_state, extra)
    by_end: dict[int, list[int]] = {}
    for n, (*_, r) in enumerate(folded):
        by_end.setdefault(r, []).append(n)
    for r in by_state:
        if not by_end.get(r):
            raise Failed(f"recognised as {m.describe()}; no sampled list reaches {show_state(m, m.states[r])}")
    bdata = np.array([row[:-1] for _, _, row, _ in folded], dtype=float).reshape(len(folded), len(whole.data))
    # each sampled list folded from each control state with the data at the zero, and
    # (where no form fits those) with the data at its initial value (`_ends`)
    ends: dict = {}

    def ended(start: str) -> np.ndarray:
        if start not in ends:
            ends[start] = _ends(m, s, folded, deadline, start)
        return ends[start]
    # where the transition function does not determine the coefficients (a clear the
    # control does not hold, a coefficient that reads the element), each list's products
    # from each state, read off folds from a large start in one field (`_slopes_of`)
    slopes = _slopes_of(m, s, folded, deadline) if coef is None else None
    out = {}
    terms = [b[i] for i in whole.data]
    ext = _with_parameters(s, loop, folded, bdata, terms)
    pairs: dict = {}
    for k, i in enumerate(m.data):
        leaves: dict[tuple, Expr] = {}
        for q in range(len(m.states)):
            def vs(start, q=q, k=k):
                return ended(start)[:, q, k]
            joint = _fit_either(s, (bdata, terms), None, vs, slice(None))
            for r, f in by_state.items():
                try:
                    leaves[(q, r)] = _structured_leaf(s, m, k, q, r, f, joint, vs, coef, slopes, (bdata, terms),
                                                      by_end, a, ext)
                except Failed:
                    # the map's parts are no forms of b's fields where a term the others
                    # dominate on every reachable state differs (b's leading streak is the
                    # slope of its trailing one only where it is not 0): the leaf itself,
                    # fitted on pairs of lists that end in q and r (`_direct_leaf`)
                    got = _direct_leaf(s, whole, m, k, q, r, folded, by_end, a, terms, pairs)
                    if got is None:
                        raise
                    leaves[(q, r)] = got
        out[i] = expr_tree(m, list(leaves), leaves, a, b, deadline)
    return out


def _with_parameters(s: Semiring, loop, folded: list, bdata: np.ndarray, terms: list):
    """b's fields, then each of them (x) each Real parameter or its inverse in the
    semiring (-p; 1 / p where positive), and each of those alone, as
    (columns on the sampled lists, terms): for forms whose coefficients read a parameter
    (a surcharge on every move at night: from the other phase, b's cost (x) it on a list
    of odd length); None where the loop has none.  Tried where b's fields alone fit no form."""
    params = [p for p in loop.params if p.type is Type.REAL]
    if not params:
        return None
    times = np_times(s)
    cols = [bdata[:, j] for j in range(bdata.shape[1])]
    out = list(terms)
    for p in params:
        pv = np.array([float(ps[p.name]) for _, ps, _, _ in folded])
        if scaling(s) and np.any(pv < 0):
            continue
        pe = Expr(Op.VAR, Type.REAL, (), p.name)
        # the parameter and its inverse in the semiring (-p, or 1 / p where it is positive)
        inverse = [(Expr(Op.NEG, Type.REAL, (pe,)), -pv)] if not scaling(s) else \
            [(Expr(Op.DIV, Type.REAL, (const(1.0, Type.REAL), pe)), 1.0 / pv)] if np.all(pv > 0) else []
        for term, values in [(pe, pv)] + inverse:
            with np.errstate(invalid="ignore"):
                cols += [times(bdata[:, j], values) for j in range(bdata.shape[1])] + [values]
            out += [_times_field(s, t, term) for t in terms] + [term]
    if len(out) == len(terms):
        return None
    return np.array(cols).T.reshape(len(folded), len(cols)), out


def _fit_either(s: Semiring, plain, ext, vs, ns) -> tuple[list, list] | None:
    """(fit, its terms): a form in b's fields (`plain`: columns and terms), from the zero
    or the initial data (`vs(start)`), on the rows `ns`; else one in `ext`'s."""
    for cols, terms in [plain] + ([ext] if ext is not None else []):
        fit = _fit(s, cols[ns], vs("zero")[ns]) or _fit(s, cols[ns], vs("init")[ns])
        if fit is not None:
            return fit, terms
    return None


def _structured_leaf(s: Semiring, m: Machine, k: int, q: int, r: int, f, joint, vs, coef, slopes, plain, by_end,
                     a: dict, ext) -> Expr:
    """A_r[q] row k (x) a's data (+) v_q: A read off b's transition function `f` (`coef`)
    or fitted (`slopes`), v fitted (`joint`, else on the lists that end in r; `vs(start)`:
    the values v is fitted to, from the zero or the initial data); `plain`: b's fields'
    columns and terms, `ext`: those with the parameters (`_with_parameters`) or None."""
    fields = m.loop.fields
    i = m.data[k]
    got = joint
    if got is None:
        got = _fit_either(s, plain, ext, vs, by_end[r])
        if got is None:
            raise Failed(f"recognised as {m.describe()}, data over {s.name}; what b adds to "
                         f"{fields[i].name} from {show_state(m, m.states[q])} is no form over {s.name} "
                         f"in b's fields: a lift is needed")
    fit, terms = got
    if coef is not None:
        arow = coef[f][q][k] if f in coef else _unit(s, len(m.data))[k]
        pieces = [_shifted(s, a[j], c) for j, c in zip(m.data, arow) if _live(s, c)]
    else:
        pieces = []
        for jj, j in enumerate(m.data):
            pieces += _slope_terms(s, m, slopes[:, q, k, jj], plain, by_end[r], a[j], ext,
                                   f"the slope of {fields[i].name} in {fields[j].name} from "
                                   f"{show_state(m, m.states[q])}")
    pieces += [_shifted(s, t, c) for t, c in zip(terms, fit[:-1]) if _live(s, c)]
    if _live(s, fit[-1]):
        pieces.append(const(_number(fit[-1], fields[i].type), fields[i].type
                            if float(fit[-1]).is_integer() else Type.REAL))
    return _joined(s, pieces, fields[i].type)


PAIRS = 16      # lists a side for `_direct_leaf`: up to PAIRS ** 2 pairs a leaf


def _ends_of(ns) -> list[int]:
    ns = list(ns)
    return ns if len(ns) <= PAIRS else ns[:PAIRS // 2] + ns[-(PAIRS - PAIRS // 2):]


def _direct_leaf(s: Semiring, whole: Machine, m: Machine, k: int, q: int, r: int, folded: list, by_end: dict,
                 a: dict, terms: list, pairs: dict) -> Expr | None:
    """Field k of the combine where a ends in q and b in r, fitted as a form over `s` in
    a's fields of the group plus b's fields, a's alone, b's alone and a constant, on
    pairs of sampled lists (their concatenation folded); None where none fits."""
    from thm3.synth.finite import fold_batched
    loop = m.loop
    fields = loop.fields
    if (q, r) not in pairs:
        # the first lists and the last (those that refuted an earlier fit come last)
        xs = _ends_of(by_end.get(q, ()))
        ys = _ends_of(by_end.get(r, ()))
        both = [(n1, n2) for n1 in xs for n2 in ys if folded[n1][1] == folded[n2][1]]
        if not both:
            pairs[(q, r)] = None
        else:
            wholes = fold_batched(loop, [(folded[n1][0] + folded[n2][0], folded[n1][1]) for n1, n2 in both])
            rows = np.array([folded[n][2][:-1] for n in range(len(folded))], dtype=float)
            where = [whole.data.index(j) for j in m.data]
            pairs[(q, r)] = (rows[[n1 for n1, _ in both]][:, where], rows[[n2 for _, n2 in both]],
                             np.array([[float(w[j]) for j in m.data] for w in wholes]))
    if pairs[(q, r)] is None:
        return None
    av, bv, target = pairs[(q, r)]
    nb = bv.shape[1]
    feats, exprs = [], []
    times = np_times(s)
    for jj, j in enumerate(m.data):
        for ll in range(nb):
            feats.append(times(av[:, jj], bv[:, ll]))
            exprs.append(_times_field(s, a[j], terms[ll]))
        feats.append(av[:, jj])
        exprs.append(a[j])
    for ll in range(nb):
        feats.append(bv[:, ll])
        exprs.append(terms[ll])
    with np.errstate(invalid="ignore"):
        fm = np.array(feats).T.reshape(len(target), len(feats))
    fit = _fit(s, fm, target[:, k])
    if fit is None:
        return None
    i = m.data[k]
    pieces = [_shifted(s, e, c) for e, c in zip(exprs, fit[:-1]) if _live(s, c)]
    if _live(s, fit[-1]):
        pieces.append(const(_number(fit[-1], fields[i].type), fields[i].type
                            if float(fit[-1]).is_integer() else Type.REAL))
    return _joined(s, pieces, fields[i].type)


BIG = 2.0 ** 20     # the start of one field in `_slopes_of`, at most: far above what sampled lists reach


def _big(m: Machine, folded: list) -> float:
    """The start of one field in `_slopes_of`: a power of 2 far above what any path's sum
    reaches on the sampled lists (1024 times the largest finite value folded, or the sum
    of the elements' sizes plus a constant's a step: a coefficient 10 * x stays far
    below it), at most BIG.  Small where the values are: each step's sum near it rounds
    to its ulp, 2.0 ** 20 to 1e-10, which seven steps of random floats carry past the
    fits' 1e-9."""
    from thm3.ir import walk
    consts = [abs(float(e.arg)) for e in walk(list(m.loop.left.outputs))
              if e.op is Op.CONST and not isinstance(e.arg, bool) and math.isfinite(float(e.arg))]
    c = max(consts, default=0.0) + 1.0
    most = 1.0
    for xs, _, row, _ in folded:
        vals = [abs(float(v)) for v in row[:-1] if isinstance(v, (int, float)) and math.isfinite(float(v))]
        size = sum(abs(float(v)) for x in xs for v in (x if isinstance(x, tuple) else (x,))
                   if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)))
        most = max(most, max(vals, default=0.0), size + c * (len(xs) + 1))
    return min(BIG, 2.0 ** math.ceil(math.log2(1024 * most)))


SCALE = 2.0 ** 500   # the start of one field in `_slopes_of` over (max, *): exact to scale by, far past any offset


def _slopes_of(m: Machine, s: Semiring, folded: list, deadline: float) -> np.ndarray:
    """(list, control state q, field k, field j) -> the product of the coefficients of k
    in j along the list from q (the semiring's zero where j never reaches k): the fold
    from q with j at `_big` and the rest at the zero, less that, where it is past half.
    Over (max, *) the start is SCALE, a power of 2 (so the product is read back exactly),
    and the fold is divided by it where it is past SCALE * 2 ** -300; over (min, *) the
    start is 1 / SCALE, the fold read where it is below 2 ** 300 / SCALE.  NaN where the
    fold is the other infinity, which hides the product (a reading of 0 under min)."""
    sign = 1.0 if s.plus is Op.MAX else -1.0
    nd = len(m.data)
    out = np.full((len(folded), len(m.states), nd, nd), float(s.zero))
    if scaling(s):
        start = SCALE ** sign
        for jj in range(nd):
            got = _ends(m, s, folded, deadline, ("big", jj, start))
            with np.errstate(invalid="ignore", divide="ignore"):
                scale = sign * np.log2(np.maximum(got, 0.0))
            # the other infinity (0 under min, +inf under max) hides the product: no reading
            out[:, :, :, jj] = np.where(scale == math.inf, math.nan,
                                        np.where(scale >= 200.0, got / start, float(s.zero)))
        return out
    big = _big(m, folded)
    for jj in range(nd):
        got = _ends(m, s, folded, deadline, ("big", jj, sign * big))
        high = sign * got >= big / 2
        out[:, :, :, jj] = np.where(high, got - sign * big, float(s.zero))
    return out


def _slope_terms(s: Semiring, m: Machine, col: np.ndarray, plain, ns: list, aj: Expr, ext,
                 what: str) -> list[Expr]:
    """The pieces (x) a's field j: the slope `col`, fitted as a form over `s` in b's
    fields (`plain`: their columns and terms; on every list, else on those that end in
    b's state; then with the parameters, `ext`), each term shifted by a's field."""
    bdata, terms = plain
    seen = ~np.isnan(col)
    ns = [n for n in ns if seen[n]]
    fit = None
    for cols, ts in [plain] + ([ext] if ext is not None else []):
        fit = _fit(s, cols[seen], col[seen]) or _fit(s, cols[ns], col[ns])
        if fit is not None:
            terms = ts
            break
    if fit is None and scaling(s):
        # over (max, *) and (min, *) a product of decays is a power of a count of b
        # (0.5 ** b.n after a clip), or a product of such powers, or exp of a sum
        got = _power_of(col[seen], bdata[seen], terms)
        if got is not None:
            return [simplify(_times_field(s, aj, got))]
    if fit is None:
        raise Failed(f"recognised as {m.describe()}, data over {s.name}; {what} is no form over {s.name} in b's "
                     f"fields: a lift is needed")
    out = [_shifted(s, _times_field(s, aj, t), c) for t, c in zip(terms, fit[:-1]) if _live(s, c)]
    if _live(s, fit[-1]):
        out.append(_shifted(s, aj, fit[-1]))
    return out


def _power_of(col: np.ndarray, bdata: np.ndarray, terms: list) -> Expr | None:
    """A slope as a power of one of b's Int fields, a product of such powers, or an
    exponential of a Real one (`thm3.synth.powers`), in b's fields `terms`; None where none
    reads it."""
    named = [(t.arg, k) for k, t in enumerate(terms) if t.op is Op.VAR]
    counts = {n: bdata[:, k] for n, k in named if terms[k].type is Type.INT}
    reals = {n: bdata[:, k] for n, k in named if terms[k].type is Type.REAL}
    return (read_power(col, counts, prefix="") or read_power_product(col, counts, prefix="")
            or read_exponential(col, reals, prefix=""))


def _times_field(s: Semiring, x: Expr, y: Expr) -> Expr:
    """x (x) y over `s`: x + y, or x * y over (max, *) and (min, *)."""
    return Expr(s.times, x.type if x.type is y.type else Type.REAL, (x, y))


def _ends(m: Machine, s: Semiring, folded: list, deadline: float, start) -> np.ndarray:
    """(list, control state q, data field) -> the field after the list, folded from q with
    the data at the semiring's zero (`start` "zero": T_q(zero), what the list adds), or at
    the fields' initial values ("init": T_q(init), which the combine may read instead where
    the data never falls below its start: a worst level that starts at 0), every q at once."""
    from thm3.semantics.samples import fold_left
    loop = m.loop
    fields = loop.fields
    init = [e.arg for e in initial_state(loop)]
    starts = []
    for q in range(len(m.states)):
        st = list(init)
        for j, v in zip(m.control, m.states[q]):
            st[j] = v
        for jj, j in enumerate(m.data):
            if start == "init":
                st[j] = float(init[j])
            elif start == "zero" or start[1] != jj:
                st[j] = float(s.zero)
            else:                               # ("big", jj, v): field jj at v, far past the rest
                st[j] = start[2]
        starts.append(st)
    batch = tuple(np.array([st[f] for st in starts], dtype=float if f in m.data else None)
                  for f in range(len(fields)))
    out = np.empty((len(folded), len(m.states), len(m.data)))
    for n, (xs, params, _, _) in enumerate(folded):
        if time.monotonic() > deadline:
            raise Failed(f"recognised as {m.describe()}; time ran out fitting the data's forms")
        end = fold_left(loop, xs, params, state=batch, dim=1)
        for k, i in enumerate(m.data):
            out[n, :, k] = np.broadcast_to(np.asarray(end[i], dtype=float), (len(m.states),))
    return out


def _number(c: float, type_: Type):
    return int(c) if type_ is Type.INT and float(c).is_integer() else float(c)


def _shifted(s: Semiring, t: Expr, c: float) -> Expr:
    """t (x) c over `s`: t + c, or t * c over (max, *) and (min, *)."""
    if c == float(s.one):
        return t
    k = _number(c, t.type) if float(c).is_integer() else float(c)
    type_ = t.type if isinstance(k, int) else Type.REAL
    return simplify(Expr(s.times, type_, (t, const(k, type_))))


def _live(s: Semiring, c: float) -> bool:
    """Whether a coefficient is a term of a form over `s` (not its zero)."""
    return not math.isnan(c) and c != float(s.zero)


def _joined(s: Semiring, pieces: list[Expr], type_: Type) -> Expr:
    if not pieces:
        if type_ is Type.INT and math.isfinite(float(s.zero)):      # 0, the zero of (max, *) on nonnegatives
            return const(int(s.zero), Type.INT)
        if type_ is Type.INT:
            raise Failed(f"an Int field over {s.name} reaches its zero, which it cannot hold")
        return const(float(s.zero), Type.REAL)
    out = pieces[0]
    for p in pieces[1:]:
        out = Expr(s.plus, out.type if out.type is p.type else Type.REAL, (out, p))
    return out


def _fit(s: Semiring, bdata: np.ndarray, v: np.ndarray, nice=None) -> list[float] | None:
    """A sparse tropical form (+)_j (c_j + b_j) (+) c_0 equal to `v` on every row of
    `bdata`: [c_1, ..., c_k, c_0], the zero for a term left out; None where none is.  The
    greatest subsolution over every term is a solution where any form is (residuation);
    then each term whose removal keeps it one is removed, the constant first.  (min, +)
    is read as (max, +) of the negated values; (max, *) and (min, *), over nonnegative
    values, as (max, +) and (min, +) of their logarithms (a negative field of b is no
    term), the coefficients read nicely as the values they scale by."""
    if scaling(s):
        if np.any(np.isnan(v)) or np.any(v < 0):
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            lb = np.where(bdata >= 0, np.log(np.maximum(bdata, 0.0)), math.nan)
            got = _fit_additive(MAX_PLUS if s.plus is Op.MAX else MIN_PLUS, lb, np.log(v), _nice_log, tops=True)
        return None if got is None else [_nice(math.exp(c)) for c in got]
    return _fit_additive(s, bdata, v, nice or _nice)


def _fit_additive(s: Semiring, bdata: np.ndarray, v: np.ndarray, nice, tops: bool = False) -> list[float] | None:
    """`_fit` over (max, +) or (min, +), the coefficients read nicely by `nice`.  `tops`:
    the other infinity is a value like any (the logarithm of 0 over (min, *), which
    absorbs every product), not a field of another semiring."""
    sign = 1.0 if s is MAX_PLUS else -1.0
    bd, vv = sign * bdata, sign * v
    n, k = bd.shape
    if np.any(np.isnan(vv)) or (not tops and np.any(vv == math.inf)):
        return None
    # a field of b that is ever the other infinity (a (min, +) field beside) is no term
    bad = np.any(np.isnan(bd) | (not tops and bd == math.inf), axis=0)
    if bad.any():
        bd = np.where(bad[None, :], -math.inf, bd)
    raw = np.full(k + 1, -math.inf)
    for j in range(k):
        if np.any(bd[:, j] > -math.inf):
            # c_j <= v - b_j on every row where b_j is not the zero (-inf where v is; no
            # bound where both are the other infinity)
            with np.errstate(invalid="ignore"):
                gap = vv - bd[:, j]
            raw[j] = float(np.min(np.where(np.isnan(gap), math.inf, gap)))
    raw[k] = float(np.min(vv)) if n else -math.inf
    # each as the small rational it is up to rounding, unless that lifts a term that no
    # row attains past the values (-2.000000005 read as -2 where the 5e-9 counts)
    coefs = np.array([nice(c) for c in raw])
    if not _matches(bd, vv, coefs):
        coefs = raw
        if not _matches(bd, vv, coefs):
            return None
    # the terms that attain the value on the fewest rows go first (b's trailing streak,
    # never above its longest one, before the longest: of two that explain the samples
    # the one that explains more stays), the constant first among equals
    with np.errstate(invalid="ignore"):
        tight = [int(np.sum(np.isclose(coefs[j] + bd[:, j], vv, rtol=1e-12, atol=1e-9) & np.isfinite(vv)))
                 if j < k else int(np.sum(np.isclose(coefs[k], vv))) for j in range(k + 1)]
    for j in sorted(range(k + 1), key=lambda j: (tight[j], j != k, -j)):
        if math.isfinite(coefs[j]):
            kept = coefs[j]
            coefs[j] = -math.inf
            if not _matches(bd, vv, coefs):
                coefs[j] = kept
    for j in range(k + 1):          # (the kept terms' coefficients read nicely where they still fit)
        if math.isfinite(coefs[j]) and nice(coefs[j]) != coefs[j]:
            kept = coefs[j]
            coefs[j] = nice(kept)
            if not _matches(bd, vv, coefs):
                coefs[j] = kept
    return [sign * c if c != -math.inf else float(s.zero) for c in coefs]


def _matches(bd: np.ndarray, vv: np.ndarray, coefs: np.ndarray) -> bool:
    k = bd.shape[1]
    pred = np.full(len(vv), coefs[k])
    for j in range(k):
        if math.isfinite(coefs[j]):
            pred = np.maximum(pred, coefs[j] + bd[:, j])
    return bool(np.array_equal(pred == -math.inf, vv == -math.inf) and np.array_equal(pred == math.inf, vv == math.inf)
                and np.allclose(
        np.where(np.isfinite(pred), pred, 0.0), np.where(np.isfinite(vv), vv, 0.0), rtol=1e-12, atol=1e-9))


def _nice(c: float) -> float:
    """A coefficient as the small rational it is up to rounding (2.0000000000000004 is 2),
    else as it is."""
    from fractions import Fraction
    if not math.isfinite(c):
        return c
    near = float(Fraction(c).limit_denominator(1000))
    return near if abs(near - c) <= 1e-9 * max(1.0, abs(c)) else c


def _nice_log(c: float) -> float:
    """`_nice` for the logarithm of a coefficient: the log of the small rational it scales
    by, up to rounding (log(0.5) + 1e-17 is log(0.5)), else as it is."""
    if not math.isfinite(c) or abs(c) > 700.0:
        return c
    near = _nice(math.exp(c))
    return math.log(near) if near > 0 and abs(math.log(near) - c) <= 1e-9 else c


def restricted(m: Machine, idx: tuple[int, ...]) -> Machine:
    """`m` with only the data fields `idx` (no field reads one outside them)."""
    return replace(m, data=tuple(idx))


# --- slopes: the products of the coefficients, where no transition function holds them ---

def determined(s: Semiring, m: Machine) -> bool:
    """Whether the coefficients of `m`'s data (all over `s`) are a function of the
    transition function (`finite.composes` over `s`)."""
    return _coefficient_matrices(s, m)[1]


def _coefficient_matrices(s: Semiring, m: Machine) -> tuple[dict | None, bool]:
    """The coefficient matrices of each transition function from each control state (None
    where a coefficient reads the element: its products are slopes), and whether they are
    a function of the transition function."""
    fields = m.loop.fields
    nd = len(m.data)
    names = {f"acc.{fields[i].name}": fields[i].name for i in m.data}
    index = {fields[i].name: k for k, i in enumerate(m.data)}
    built = {}
    for key, exprs in data_steps(m).items():
        rows = []
        for e in exprs:
            row = _tropical_row(s, e, names)
            if row is None:
                raise Failed(f"recognised as {m.describe()}; {e!r} is not affine over {s.name}")
            if any(isinstance(c, Expr) for n, c in row.items() if n != ""):
                return None, False
            rows.append({index[n]: c for n, c in row.items() if n != ""})
        built[key] = np.array([[rows[k].get(j, float(s.zero)) for j in range(nd)] for k in range(nd)])

    def step_matrix(q, c):
        return built[(q, c)]
    product, unit = _product(s), _unit(s, nd)
    coef = coefficient_products(m, step_matrix, product, unit)
    return coef, composes(m, step_matrix, coef, unit, product)


def slopes(m: Machine, expr_of, roles: dict, got: dict | None) -> list:
    """For a copies lift (`finite._lift_set`): the product of the data's coefficients from
    each control state, over (max, +) or (min, +), for each group whose coefficients the
    transition function does not determine: `fsm{q}_d{i}_{j}`, starting at the semiring's
    one on the diagonal and its zero off it, updated by the step's coefficients (the
    copies of the control read from state q).  `got`: the fields' `groups`.  [] where none
    is needed or one has no such update."""
    from thm3.synth.finite import Added, hoisted
    loop = m.loop
    fields = loop.fields
    out = []
    for s, idx in (got or {}).items():
        if s.plus is Op.ADD:
            continue
        try:
            if determined(s, restricted(m, idx)):
                continue
        except Failed:
            return []
        pos = {i: m.data.index(i) for i in idx}
        names = {f"acc.{fields[i].name}": fields[i].name for i in idx}
        for qi in range(len(m.states)):
            control = {f"acc.{fields[j].name}": expr_of(qi, kk) for kk, j in enumerate(m.control)}
            for j in idx:
                slope = {fields[ll].name: Expr(Op.VAR, Type.REAL, (), f"acc.fsm{qi}_d{pos[ll]}_{pos[j]}") for ll in idx}
                for i in idx:
                    (stepped,) = substitute([loop.left.outputs[i]], control)
                    stepped = hoisted(simplify(stepped), set(names))
                    update = None if stepped is None else _homogeneous(s, stepped, names, slope)
                    if update is None:
                        return []
                    key = f"fsm{qi}_d{pos[i]}_{pos[j]}"
                    roles[key] = ("slope", qi, pos[i], pos[j])
                    one = float(s.one) if i == j else float(s.zero)
                    out.append(Added(key, f"slope_{fields[i].name}_{fields[j].name}_from{qi}", Type.REAL, one,
                                     simplify(update), f"what {fields[i].name} adds to the {fields[j].name} before "
                                     f"the list, over {s.name}, from {show_state(m, m.states[qi])} (the product of "
                                     f"its coefficients: -inf where a reset clears it)"))
    return out


def _homogeneous(s: Semiring, e: Expr, names: dict, slope: dict) -> Expr | None:
    """The homogeneous part of a data update over `s` (where-branches on data-free
    conditions kept), with data field l read as `slope[l]`."""
    if e.op is Op.WHERE:
        c, x, y = e.src
        if free_vars([c]) & set(names):
            return None
        hx, hy = _homogeneous(s, x, names, slope), _homogeneous(s, y, names, slope)
        return None if hx is None or hy is None else Expr(Op.WHERE, Type.REAL, (c, hx, hy))
    row = _tropical_row(s, e, names)
    if row is None:
        return None
    pieces = [_shifted(s, slope[n], c) if not isinstance(c, Expr) else simplify(_times_field(s, slope[n], c))
              for n, c in row.items() if n != ""]
    return _joined(s, pieces, Type.REAL)
