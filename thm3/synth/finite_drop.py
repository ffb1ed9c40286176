"""The copies lift's data copies, trimmed (`thm3.synth.finite_lift`): a data copy or slope
that equals a field, its negation, a constant or its semiring's zero on folded lists adds
nothing, and one that is a relation of the kept fields of its group (a fixed multiple or
shift, a linear combination, a factor of parameters) is read as that relation; the lift's
proof decides each."""
from __future__ import annotations

import math
import time
from dataclasses import replace as dc_replace
from fractions import Fraction

import numpy as np

from thm3.ir import Expr, Loop, Op, Type, const, free_vars, substitute, var
from thm3.ir.simplify import simplify
from thm3.synth.finite_machine import Added, Failed, Machine, groups_or_none, with_added
from thm3.synth.finite_affine import affine_rows, moduli
from thm3.synth.finite_walks import fold_batched, random_and_walked


DROP_WALKS = 200        # walks over the control's moves that a dropped data copy must agree on


def drop_copied_data(m: Machine, added: list[Added], deadline: float, slopes=frozenset(),
                      roles: dict | None = None, relate: int = 0) -> tuple[list[Added], dict[str, Expr], int]:
    """Data copies that equal (on folded lists) an original field, its negation, another
    kept copy, or 0 add nothing, and a slope that is constant (its combine reads the
    constant, and so do the updates of the others); a copy another kept one reads stays,
    unless it is read back as a field.  With `roles` (`_lift_set`'s) and `relate` 1, also a
    copy that is a relation of the kept fields of its own semiring group (`_related`): a
    fixed multiple over (+, *), (max, *) or (min, *), a fixed shift over (max, +) or
    (min, +), a linear combination over (+, *) (a phase that only rescales its data: the
    minimal weighted automaton keeps a basis of the copies, Schützenberger's reduction);
    with `relate` 2, also one whose factor is a power product of parameters.  Its readers
    read the relation, which stays in the semiring, and the lift's proof decides it.
    Returns the kept fields, what each dropped one equals, and the highest level of
    relation used (0: none)."""
    loop = m.loop
    mega = with_added(loop, added)
    # random lists, and walks over the control's moves: a copy that differs only after a
    # rare cell (x == 92), or only where a start state's phase survives three steps, is no
    # copy of a field (many and long walks: folded together, length by length)
    lists = random_and_walked(m, deadline, seed=1, count=40, shortest=0, longest=6, walks=DROP_WALKS)
    if time.monotonic() > deadline:         # (folding them with 40 copies: seconds)
        raise Failed("time ran out reading the copies lift")
    cols = np.array(fold_batched(mega, lists), dtype=float).T
    k = len(loop.fields)
    params = _parameters_of(m, lists) if relate > 1 else None
    data_keys = {f"fsm{qi}_{loop.fields[j].name}" for qi in range(len(m.states)) for j in m.data}
    data_keys |= set(slopes)
    # the zero of each copy's semiring, over (max, +), (min, +), (max, *), (min, *): a copy
    # that stays there on every list is read as it, even by the others (`_at_zero`)
    zero_of = {f"fsm{qi}_{loop.fields[j].name}": float(s.zero) for s, idx in (groups_or_none(m) or {}).items()
               if s.plus is not Op.ADD for j in idx for qi in range(len(m.states))}
    # a slope constant on every list (the diagonal 1 of a unipotent step, a 0 off it) is
    # read as that constant by the updates of the others, then dropped with them
    constant = {}
    for n, a in enumerate(added):
        c = cols[k + n]
        if a.key in slopes and np.allclose(c, c[0]):
            v = float(c[0])
            constant[f"acc.{a.key}"] = const(int(round(v)) if a.type is Type.INT else v, a.type)
    replaced: dict[str, Expr] = dict(constant)
    if constant:
        added = [a if a.key in slopes and f"acc.{a.key}" in constant else
                 dc_replace(a, update=simplify(substitute([a.update], constant)[0])) for a in added]
    dropped: set[str] = set()
    group = _relation_groups(m, roles) if roles is not None and relate else {}
    related = 0
    again = None
    index = {f"acc.{f.name}": i for i, f in enumerate(loop.fields)} | \
        {f"acc.{a.key}": k + n for n, a in enumerate(added)}     # (`_holds`' rows of the columns)
    while True:
        needed = set()
        for a in added:
            if a.key not in dropped:
                needed |= {n[4:] for n in free_vars([a.update]) if n.startswith("acc.fsm")} - {a.key}
        known = [(var(f"acc.{f.name}", f.type), cols[i]) for i, f in enumerate(loop.fields)
                 if f.type in (Type.INT, Type.REAL)]
        drop = set()
        swap: dict[str, Expr] = {}
        for n, a in enumerate(added):
            if a.key in dropped:
                continue
            c = cols[k + n]
            if a.key in data_keys:
                equal = _read_back(a, c, known, a.key in slopes)
                if equal is None and a.key in group:
                    same = [(e, o) for e, o in known if group.get(e.arg[4:]) == group[a.key]]
                    equal, level = _related(a, c, same, group[a.key], params)
                    if equal is not None:
                        # a relation has unknowns an equality has not: it holds on a second,
                        # longer sample too (counts of rare bytes fit one sample by chance)
                        if again is None:
                            again = _fresh_columns(m, mega, deadline)
                        if not _holds(equal, again[1][k + n], again[1], index, again[0]):
                            equal = None
                    related = max(related, level) if equal is not None else related
                    is_relation = equal is not None
                else:
                    is_relation = False
                if equal is not None and (a.key not in needed or (equal.op is Op.VAR and equal.type is a.type)
                                          or _at_zero(equal, zero_of.get(a.key)) or is_relation):
                    # one the others read goes too where it equals a field before it: they
                    # read that field instead (a slope of a sum that is the sum itself)
                    drop.add(a.key)
                    replaced.setdefault(f"acc.{a.key}", equal)
                    if a.key in needed:
                        swap[f"acc.{a.key}"] = equal
                    continue
                known.append((var(f"acc.{a.key}", a.type), c))
        if not drop:
            return [a for a in added if a.key not in dropped], _resolved(replaced), related
        if swap:
            added = [dc_replace(a, update=simplify(substitute([a.update], swap)[0])) for a in added]
        dropped |= drop


def _relation_groups(m: Machine, roles: dict) -> dict[str, tuple]:
    """Field name or copy key -> (its semiring, its group's number), for the data fields
    and their data copies and slopes: relations (`_related`) are read within a group only.
    Empty where the data is reduced modulo m (a multiple of a residue is no residue) or is
    over (or, and)."""
    from thm3.synth.semiring import RING
    fields = m.loop.fields
    got = groups_or_none(m)
    try:
        if got is None and any(v is not None for v in moduli(m, affine_rows(m)).values()):
            return {}
    except Failed:
        return {}
    by_field = {j: (RING, 0) for j in m.data} if got is None else \
        {j: (s, n) for n, (s, idx) in enumerate(got.items()) for j in idx if s.times in (Op.MUL, Op.ADD)}
    out = {fields[j].name: g for j, g in by_field.items()}
    for key, role in roles.items():
        if role[0] in ("data", "slope") and m.data[role[-1]] in by_field:
            out[key] = by_field[m.data[role[-1]]]
    return out


def _related(a: Added, c: np.ndarray, known: list, group: tuple,
             params: dict | None = None) -> tuple[Expr | None, int]:
    """`_related_fixed` (level 1), else (with the lists' `params`) `_related_by_parameters`
    (level 2)."""
    got = _related_fixed(a, c, known, group)
    if got is not None:
        return got, 1
    if params is not None and a.type is Type.REAL:
        return _related_by_parameters(a, c, known, group, params), 2
    return None, 0


MAX_EXPONENT = 2        # a parameter's power in a relation's factor: p ** -2 .. p ** 2


def _related_by_parameters(a: Added, c: np.ndarray, known: list, group: tuple, params: dict) -> Expr | None:
    """A copy that is a multiple (a shift over (max, +), (min, +)) of one known field by a
    factor that is a product of powers of the parameters (a sum of multiples of them, for
    a shift) on every list: a peak in pascals that is `pa_per_count` times the peak in
    counts.  (A factor the control state the list ends in chooses, a unit factor on every
    other step, is not read: its lifted loop, analysed again alone, took past 60 s.)"""
    sr = group[0]
    if not np.all(np.isfinite(c) | np.isinf(c)):
        return None
    for e, o in known:
        got = _parameter_factor(c, o, params, sr.times is Op.ADD, positive=sr.plus is not Op.ADD)
        if got is not None:
            return _with_factor(e, got, sr.times is Op.ADD, a.type)
    return None


def _parameter_factor(c: np.ndarray, o: np.ndarray, params: dict, shift: bool, positive: bool):
    """(k, ((param, exponent), ...)) with c = k * prod p ** e * o (c = o + k + sum e * p
    for a shift) on every row, k a short fraction and e a whole number up to MAX_EXPONENT
    in size; None where none."""
    if shift:
        inf = np.isinf(c) | np.isinf(o)
        if not np.array_equal(c[inf], o[inf]):
            return None
        y = c[~inf] - o[~inf]
        cols = {p: v[~inf] for p, v in params.items()}
        sign = 1.0
    else:
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(o))):
            return None
        live = o != 0
        if not np.allclose(c[~live], 0):
            return None
        with np.errstate(all="ignore"):
            ratio = c[live] / o[live]
        if not len(ratio) or np.any(ratio == 0) or (positive and np.any(ratio < 0)):
            return None
        sign = 1.0 if ratio[0] > 0 else -1.0
        if np.any(np.sign(ratio) != sign):
            return None
        y = np.log(np.abs(ratio))
        cols = {p: np.log(v[live]) for p, v in params.items() if np.all(v[live] > 0)}
    if len(y) == 0:
        return None
    names = [p for p, v in cols.items() if not np.allclose(v, v[0])]
    mat = np.stack([np.ones(len(y))] + [cols[p] for p in names], axis=1)
    if len(y) < 2 * mat.shape[1]:
        return None
    coefs, *_ = np.linalg.lstsq(mat, y, rcond=None)
    exps = {p: int(round(float(x))) for p, x in zip(names, coefs[1:])}
    if any(abs(x - e) > 1e-6 or abs(e) > MAX_EXPONENT for x, e in zip(coefs[1:], exps.values())):
        return None
    rest = y - sum((e * cols[p] for p, e in exps.items()), np.zeros(len(y)))
    base = float(np.mean(rest))
    k = _short(base if shift else sign * math.exp(base), Type.REAL)
    if k is None or (not shift and k == 0):
        return None
    want = (float(k) if shift else math.log(abs(float(k)))) + sum((e * cols[p] for p, e in exps.items()),
                                                                   np.zeros(len(y)))
    if not np.allclose(y, want, rtol=1e-9, atol=1e-9):
        return None
    return k, tuple(sorted((p, e) for p, e in exps.items() if e))


def _with_factor(e: Expr, factor, shift: bool, type_: Type) -> Expr:
    """e (x) k * prod p ** n (e + k + sum n * p for a shift)."""
    k, exps = factor
    if shift:
        out = _shifted(e, k, type_)
        for p, n in exps:
            term = var(p, Type.REAL) if n == 1 else Expr(Op.MUL, Type.REAL, (const(float(n), Type.REAL),
                                                                            var(p, Type.REAL)))
            out = Expr(Op.ADD, type_, (out, term))
        return out
    out = _scaled_by(e, k, type_)
    for p, n in exps:
        for _ in range(abs(n)):
            out = Expr(Op.MUL if n > 0 else Op.DIV, type_, (out, var(p, Type.REAL)))
    return out


def _related_fixed(a: Added, c: np.ndarray, known: list, group: tuple) -> Expr | None:
    """What a data copy or slope (its column `c` on folded lists) equals as a relation of
    the `known` fields of its group: λ * o over a multiplicative semiring (λ > 0 for
    (max, *) and (min, *), an integer for Int), o + λ over (max, +) or (min, +) (the
    infinities in the same places), a combination of several over (+, *); None where none.
    The coefficients are read as short fractions and the whole column checked again."""
    from thm3.synth.semiring import RING
    sr = group[0]
    if not known or not np.all(np.isfinite(c) | np.isinf(c)):
        return None
    if sr.times is Op.ADD:                  # a shift, over (max, +) or (min, +)
        for e, o in known:
            same_inf = np.isinf(c) | np.isinf(o)
            if not np.array_equal(c[same_inf], o[same_inf]) or same_inf.all():
                continue
            d = c[~same_inf] - o[~same_inf]
            lam = _short(float(d[0]), a.type)
            if lam is not None and np.allclose(d, float(lam)):
                return _shifted(e, lam, a.type)
        return None
    if not np.all(np.isfinite(c)):
        return None
    for e, o in known:                      # a fixed multiple
        if not np.all(np.isfinite(o)) or np.allclose(o, 0):
            continue
        at = int(np.argmax(np.abs(o)))
        lam = _short(float(c[at] / o[at]), a.type)
        if lam is None or lam == 0 or (sr.plus is not Op.ADD and lam < 0):
            continue
        if np.allclose(c, float(lam) * o, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(c))))):
            return _scaled_by(e, lam, a.type)
    if sr is not RING:
        return None
    usable = [(e, o) for e, o in known if np.all(np.isfinite(o))]
    if len(usable) < 2 or len(c) <= 2 * len(usable):
        return None
    mat = np.stack([o for _, o in usable], axis=1)
    coefs, *_ = np.linalg.lstsq(mat, c, rcond=None)
    lams = [_short(float(x), a.type) for x in coefs]
    if any(x is None for x in lams):
        return None
    fit = mat @ np.array([float(x) for x in lams])
    if not np.allclose(c, fit, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(c))))):
        return None
    out = None
    for (e, _), lam in zip(usable, lams):
        if lam != 0:
            term = _scaled_by(e, lam, a.type)
            out = term if out is None else Expr(Op.ADD, a.type, (out, term))
    return out


def _parameters_of(m: Machine, lists: list) -> dict[str, np.ndarray]:
    """Each numeric parameter's value on each sampled list."""
    return {p.name: np.array([float(ps[p.name]) for _, ps in lists]) for p in m.loop.params
            if p.type in (Type.INT, Type.REAL)}


def _fresh_columns(m: Machine, mega: Loop, deadline: float) -> tuple[dict, np.ndarray]:
    """The fields of `mega` (the loop with its copies) folded on a second sample: other
    random lists, longer, and other walks; with the lists' parameters."""
    lists = random_and_walked(m, deadline, seed=2, count=80, shortest=0, longest=12, walks=DROP_WALKS)
    if time.monotonic() > deadline:
        raise Failed("time ran out reading the copies lift")
    return _parameters_of(m, lists), np.array(fold_batched(mega, lists), dtype=float).T


def _holds(relation: Expr, c: np.ndarray, cols: np.ndarray, index: dict, params: dict) -> bool:
    """Whether the relation (`_related`'s: sums of multiples of fields, or a field plus a
    constant, the factors read off parameters) gives the column `c`, on the columns `cols`
    (`index`: field -> row; `params`: the parameters' values)."""
    def value(e: Expr) -> np.ndarray:
        match e.op:
            case Op.VAR if e.arg in index:
                return cols[index[e.arg]]
            case Op.VAR:
                return params[e.arg]
            case Op.CONST:
                return np.full(len(c), float(e.arg))
            case Op.MUL:
                return value(e.src[0]) * value(e.src[1])
            case Op.DIV:
                return value(e.src[0]) / value(e.src[1])
            case Op.ADD:
                return value(e.src[0]) + value(e.src[1])
        raise AssertionError(f"no relation: {e!r}")
    with np.errstate(all="ignore"):
        got = value(relation)
    inf = np.isinf(c) | np.isinf(got)
    if not np.array_equal(c[inf], got[inf]):
        return False
    return bool(np.allclose(c[~inf], got[~inf], rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(c), initial=0)))))


def _short(x: float, type_: Type) -> Fraction | None:
    """`x` as a short fraction (denominator ≤ 1000; an integer for Int) where it is one to
    1e-9 and the float printed for it reads back as it (the provers and the composition
    route read a constant by its decimal text: 0.45 is 9/20, but no float is 16/11, so a
    relation through it is not offered); None otherwise."""
    if not math.isfinite(x):
        return None
    f = Fraction(x).limit_denominator(1000)
    if abs(float(f) - x) > 1e-9 * max(1.0, abs(x)):
        return None
    if f.denominator != 1 and (type_ is Type.INT or Fraction(repr(float(f))) != f):
        return None
    return f


def _number(f: Fraction, type_: Type) -> Expr:
    return const(int(f) if type_ is Type.INT else float(f), type_)


def _scaled_by(e: Expr, lam: Fraction, type_: Type) -> Expr:
    return e if lam == 1 else Expr(Op.MUL, type_, (_number(lam, type_), e))


def _shifted(e: Expr, lam: Fraction, type_: Type) -> Expr:
    return e if lam == 0 else Expr(Op.ADD, type_, (e, _number(lam, type_)))


def _resolved(replaced: dict[str, Expr]) -> dict[str, Expr]:
    """`replaced` with each expression reading only kept fields (a copy read back as one
    that a later round dropped in turn reads what that one equals)."""
    out = dict(replaced)
    for _ in range(len(out)):
        changed = False
        for key, e in out.items():
            if free_vars([e]) & set(out):
                out[key] = simplify(substitute([e], out)[0])
                changed = True
        if not changed:
            break
    return out


def _at_zero(e: Expr, zero: float | None) -> bool:
    """A constant at the semiring's zero (an infinity, or 0 over (max, *)): a copy that
    stays there on every list (copies from the zero of data with no data-free part), which
    its readers read as that zero."""
    return (e.op is Op.CONST and not isinstance(e.arg, bool)
            and (math.isinf(float(e.arg)) or (zero is not None and float(e.arg) == zero)))


def _read_back(a: Added, c: np.ndarray, known: list, slope: bool) -> Expr | None:
    """What a data copy or slope equals on every folded list (its column `c`): 0, a
    constant (a slope), or a known field or its negation; None where none."""
    zero = const(0 if a.type is Type.INT else 0.0, a.type)
    if np.allclose(c, 0):
        return zero
    if isinstance(a.default, float) and math.isinf(a.default) and np.all(c == a.default):
        return const(a.default, a.type)     # a tropical copy that stays at its zero
    if slope and np.allclose(c, c[0]):
        return const(int(round(float(c[0]))) if a.type is Type.INT else float(c[0]), a.type)
    for e, o in known:
        if np.allclose(c, o):
            return e
        if np.allclose(c, -o):
            return Expr(Op.NEG, e.type, (e,))
    return None
