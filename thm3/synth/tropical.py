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
off folds from a start scaled by 2 ** 500, exact to divide by.

The numbers under the combine, the folds of sampled lists and the fits to them, are
`thm3.synth.tropical_fit`'s."""
from __future__ import annotations

import math
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
from thm3.synth.tropical_fit import ends_from, fit_form, matrix_product, slopes_of, unit_matrix

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
    # (where no form fits those) with the data at its initial value (`ends_from`)
    ends: dict = {}

    def ended(start: str) -> np.ndarray:
        if start not in ends:
            ends[start] = ends_from(m, s, folded, deadline, start)
        return ends[start]
    # where the transition function does not determine the coefficients (a clear the
    # control does not hold, a coefficient that reads the element), each list's products
    # from each state, read off folds from a large start in one field (`slopes_of`)
    slopes = slopes_of(m, s, folded, deadline) if coef is None else None
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
        fit = fit_form(s, cols[ns], vs("zero")[ns]) or fit_form(s, cols[ns], vs("init")[ns])
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
        arow = coef[f][q][k] if f in coef else unit_matrix(s, len(m.data))[k]
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
    fit = fit_form(s, fm, target[:, k])
    if fit is None:
        return None
    i = m.data[k]
    pieces = [_shifted(s, e, c) for e, c in zip(exprs, fit[:-1]) if _live(s, c)]
    if _live(s, fit[-1]):
        pieces.append(const(_number(fit[-1], fields[i].type), fields[i].type
                            if float(fit[-1]).is_integer() else Type.REAL))
    return _joined(s, pieces, fields[i].type)


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
        fit = fit_form(s, cols[seen], col[seen]) or fit_form(s, cols[ns], col[ns])
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
    product, unit = matrix_product(s), unit_matrix(s, nd)
    coef = coefficient_products(m, step_matrix, product, unit)
    return coef, composes(m, step_matrix, coef, unit, product)


def slopes(m: Machine, expr_of, roles: dict, got: dict | None) -> list:
    """For a copies lift (`finite_lift._lift_set`): the product of the data's coefficients from
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
