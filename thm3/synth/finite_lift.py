"""Lifting a loop of the finite-state class (`thm3.synth.finite.lift_candidates`): copies
of the state reached from the other reachable states, minimised on the monoid to the fewest
that tell the transition functions apart, the data's copies and slopes beside them, and
the lift's combine by construction where the data allows (`thm3.synth.copies`)."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, const, free_vars, initial_state, substitute, var
from thm3.ir.simplify import simplify
from thm3.synth.finite_machine import Added, Failed, Machine, groups_or_none, show_state, with_added
from thm3.synth.finite_recognise import readings, recognise, self_reading
from thm3.synth.finite_affine import (MODULUS, affine_rows, coefficients_determined, homogeneous, moduli,
                                      step_matrices, symbolic)
from thm3.synth.finite_walks import fold_batched, random_and_walked
from thm3.synth.finite_drop import drop_copied_data


MAX_CHOICES = 20000     # sets of copies tried for the fewest that tell the functions apart (then the full table)
MAX_LIFT_MONOID = 4096  # MAX_MONOID, where only a lift is read off them (a dwell thermostat's 8 states: 1,722)


@dataclass(frozen=True)
class LiftSet:
    fields: tuple[Added, ...]
    why: str
    full: bool = False          # the full table (every copy), tried after the minimal ones
    combine: Fn | None = None   # the composition read group by group (`thm3.synth.copies`), over the keys
    related: int = 0            # a copy was dropped as a relation of others: 1 fixed (a multiple, a shift, a


def lift_candidates(loop: Loop, deadline: float, limit: int = 3) -> list[LiftSet]:
    """Lifts of a loop in the class, smallest first: the transition function restricted
    to the reachable states is what a lifted state must determine (two lists whose
    functions differ there are told apart by some prefix), so the lifted state holds
    the fields of the state each list leads some reachable states to.  Minimised on the
    monoid: a copy equal on every list to a field, to a constant, to another copy or to
    a negation adds nothing; the fewest copies that tell every transition function apart
    (and whose updates read only kept copies) come first, then the full table.  Data
    fields (finite control with linear data) are copied from each other control state,
    starting at 0, and dropped where they equal a kept field on folded lists."""
    # (a lift reads its copies off the transition functions, but composes none of them
    # by table: it takes more of them than synthesis does)
    try:
        m = recognise(loop, deadline, functions=MAX_LIFT_MONOID)
    except Failed:
        return []
    out = _copies_lifts(m, deadline, limit)
    # a bounded count or sum is finite control too, and its copies multiply the control
    # states (a buffer of up to 3 ones beside a phase mod 4: 10 states, 18 copies whose
    # lifted loop has more control states than the route takes); read as data it adds one
    # copy and a slope per control state instead: both are offered, fewest fields first
    for m2 in readings(loop, _data_readings(m), deadline, functions=MAX_LIFT_MONOID):
        out += [s for s in _copies_lifts(m2, deadline, limit)
                if all(_keys(s) != _keys(t) for t in out)]
    return sorted(out, key=lambda s: (s.full, len(s.fields)))


def _keys(s: LiftSet) -> tuple:
    return tuple(a.key for a in s.fields)


def _data_readings(m: Machine) -> list[frozenset]:
    """The control fields that may be read as data instead: the numeric ones whose update
    reads themselves (a count, a buffered sum), all at once (where some control is left)
    and each alone."""
    numeric = [i for i in self_reading(m.loop) if i in m.control]
    out = [frozenset(numeric)] if 0 < len(numeric) < len(m.control) else []
    if len(numeric) > 1:
        out += [frozenset([i]) for i in numeric]
    return out


def _copies_lifts(m: Machine, deadline: float, limit: int) -> list[LiftSet]:
    """The copies lifts of one reading of the loop as a machine (its control and data)."""
    loop = m.loop
    by_state, clash = m.determined()
    fields = loop.fields
    funcs = [m.identity] + [f for f in m.monoid if f != m.identity]
    nq = len(m.states)
    col = {}
    for qi in range(nq):
        for k in range(len(m.control)):
            col[(qi, k)] = tuple(m.states[f[qi]][k] for f in funcs)
    originals = {col[(0, k)]: k for k in range(len(m.control))}
    control_idx = {f"acc.{fields[i].name}": k for k, i in enumerate(m.control)}
    reads = [{control_idx[n] for n in free_vars([loop.left.outputs[i]]) if n in control_idx} for i in m.control]
    data_reads_control = {control_idx[n] for i in m.data for n in free_vars([loop.left.outputs[i]])
                          if n in control_idx}
    # copies that no field already gives, one a column
    copies: list[tuple[int, int]] = []
    seen_cols = set(originals)
    for qi in range(1, nq):
        for k in range(len(m.control)):
            c = col[(qi, k)]
            if len(set(c)) == 1 or c in seen_cols or _negation(c) in originals or \
                    _function_of(c, originals) is not None:
                continue
            seen_cols.add(c)
            copies.append((qi, k))
    need_data = clash is not None or bool(m.data)
    if not need_data:
        return []

    given: dict[tuple, bool] = {}

    def available(c, chosen_cols) -> bool:
        if c not in given:          # without any copy: a constant, a field, its negation, a function of one
            given[c] = len(set(c)) == 1 or c in originals or \
                (isinstance(c[0], bool) and _negation(c) in originals) or _function_of(c, originals) is not None
        return given[c] or c in chosen_cols or (isinstance(c[0], bool) and _negation(c) in chosen_cols)

    # the transition functions' keys: the state they lead the initial one to, then one
    # code a chosen copy (values renumbered after each, so that they stay small)
    start_codes = np.array([f[0] for f in funcs], dtype=np.int64)
    codes = {q: np.unique(np.array([repr(v) for v in col[q]]), return_inverse=True)[1].astype(np.int64)
             for q in copies}

    def works(chosen) -> bool:
        key = start_codes
        for q in chosen:
            key = np.unique(key * (int(codes[q].max()) + 1) + codes[q], return_inverse=True)[1]
        return int(key.max()) + 1 == len(funcs)

    # the copies every lift with data holds: the control fields the data's updates read,
    # from every other state, where no field gives them, and what those copies read
    data_states = [qi for qi in range(1, nq)] if m.data else []
    by_column = {}
    for q in copies:
        by_column.setdefault(col[q], q)
    for q in copies:
        if isinstance(col[q][0], bool):
            by_column.setdefault(_negation(col[q]), q)
    forced: list[tuple[int, int]] = []
    todo = [(qi, j) for qi in data_states for j in sorted(data_reads_control)]
    while todo:
        qi, j = todo.pop(0)
        if available(col[(qi, j)], {col[q] for q in forced}):
            continue
        q = by_column[col[(qi, j)]]
        forced.append(q)
        todo += [(q[0], jj) for jj in sorted(reads[q[1]])]
    order = {q: n for n, q in enumerate(copies)}
    rest = [q for q in copies if q not in forced]
    found: list[tuple] = []
    tried = 0
    for size in range(0, len(rest) + 1):
        if time.monotonic() > deadline or tried > MAX_CHOICES:
            break
        for extra in itertools.combinations(rest, size):
            tried += 1
            if tried > MAX_CHOICES or (tried % 256 == 0 and time.monotonic() > deadline):
                break
            chosen = tuple(sorted(forced + list(extra), key=order.get))
            # the control copies must identify the transition function (only where the state
            # does not already); the data copies read the control copies from their state
            if _closed_under(chosen, col, reads, available) and (clash is None or works(chosen)):
                found.append(chosen)
                if len(found) >= limit:
                    break
        if found:
            break
    # where data over (max, +) or (min, +) starts away from its zero (a time from 0.0, not
    # inf), its copies from that start hold the offsets only where the data never passes
    # the start; each set is offered again with its data copies from the zero, the initial
    # state's among them (one field more a data field: T_q(d) = A_q d (+) T_q(zero)), and
    # only so where sampled data passes its start (a score from 0.0 that a negative
    # reading lowers, whose copies from the start tell nothing)
    groups = groups_or_none(m)
    started = _zero_started(m, groups)
    variants = [False] + ([True] if started else [])
    if started and (_scaled_start(groups, started) or _passes_start(m, groups, started, deadline)):
        variants = [True]
    # each set read within the deadline (the full table of a lexer's 40 copies: seconds);
    # one past it, or whose data copies read a control copy it leaves out, is not offered
    out = []
    for chosen, full in [(chosen, False) for chosen in found] + [(tuple(copies), True)]:
        for from_zero in variants:
            if time.monotonic() > deadline:
                break
            try:
                got = _lift_set(m, chosen, col, originals, deadline, full=full, from_zero=from_zero)
                # a lift smaller by relations read on lists is offered first; the same set
                # with fixed relations only, then with none, after it, should a relation
                # not be proved
                also = [got]
                for level in range(got.related - 1, -1, -1):
                    also.append(_lift_set(m, chosen, col, originals, deadline, full=full, from_zero=from_zero,
                                          relate=level))
                    if also[-1].related < level:
                        break
            except Failed:
                continue
            for got in also:
                if not full or all(len(got.fields) > len(s.fields) for s in out):
                    out.append(got)
    return [s for s in out if s.fields]


def _closed_under(chosen, col, reads, available) -> bool:
    cols = {col[q] for q in chosen}
    return all(available(col[(qi, j)], cols) for qi, k in chosen for j in reads[k])


def _function_of(c: tuple, originals: dict):
    """(k, {value of original control field k: value of c}) where that field's column
    determines c on every transition function (a capped count started one step on is
    min(n + 1, 3), a function of n), else None; the first such field."""
    for o, k in originals.items():
        table: dict = {}
        if all(table.setdefault(u, v) == v for u, v in zip(o, c)):
            return k, table
    return None


def _negation(c: tuple) -> tuple | None:
    return tuple(not v for v in c) if c and isinstance(c[0], bool) else None


def _lift_set(m: Machine, chosen, col, originals, deadline, full: bool = False, from_zero: bool = False,
              relate: int = 2) -> LiftSet:
    loop = m.loop
    fields = loop.fields
    keys = {q: f"fsm{q[0]}_{fields[m.control[q[1]]].name}" for q in chosen}
    by_col = {col[q]: q for q in chosen}

    def expr_of(qi: int, k: int) -> Expr:
        c = col[(qi, k)]
        t = fields[m.control[k]].type
        if c in by_col:
            return var(f"acc.{keys[by_col[c]]}", t)
        if c in originals:
            return var(f"acc.{fields[m.control[originals[c]]].name}", t)
        if len(set(c)) == 1:
            return const(c[0], t)
        neg = _negation(c)
        if neg in by_col:
            return Expr(Op.NOT, Type.BOOL, (var(f"acc.{keys[by_col[neg]]}", Type.BOOL),))
        if neg in originals:
            return Expr(Op.NOT, Type.BOOL, (var(f"acc.{fields[m.control[originals[neg]]].name}", Type.BOOL),))
        got = _function_of(c, originals)
        if got is None:         # (a copy the chosen ones leave out: only the combine asks for it)
            raise Failed(f"no field of the lift gives {fields[m.control[k]].name} from {show_state(m, m.states[qi])}")
        k0, table = got
        f0 = fields[m.control[k0]]
        items = sorted(table.items(), key=lambda kv: repr(kv[0]))
        out = const(items[-1][1], t)
        for u, v in reversed(items[:-1]):
            out = Expr(Op.WHERE, t, (Expr(Op.EQ, Type.BOOL, (var(f"acc.{f0.name}", f0.type), const(u, f0.type))),
                                     const(v, t), out))
        return out

    added = []
    roles: dict[str, tuple] = {}        # key -> its place in the transition function (`copies_combine`)
    for qi, k in chosen:
        roles[keys[(qi, k)]] = ("control", qi, k)
        i = m.control[k]
        f = fields[i]
        reads = free_vars([loop.left.outputs[i]])      # only these need a name (the others may have none)
        mapping = {f"acc.{fields[j].name}": expr_of(qi, kk) for kk, j in enumerate(m.control)
                   if f"acc.{fields[j].name}" in reads}
        (update,) = substitute([loop.left.outputs[i]], mapping)
        c = col[(qi, k)]
        state = show_state(m, m.states[qi])
        if f.type is Type.BOOL and len(set(c[1:])) == 1 and c[0] != c[1]:
            hint, comment = "nonempty" if c[1] is True else "empty", "whether the list is not empty" \
                if c[1] is True else "whether the list is empty"
        else:
            hint, comment = f"{f.name}_from{qi}", f"{f.name} of the state this list leads {state} to"
        added.append(Added(keys[(qi, k)], hint, f.type, m.states[qi][k], simplify(update), comment))
    # data: each data field from each other control state, starting at 0 (at -inf, a Real,
    # for a field over (max, +); at inf over (min, +): the semiring's zero); `from_zero`:
    # a tropical group that starts away from its zero is copied from the zero, from the
    # initial state too (`_zero_started`)
    groups = groups_or_none(m)
    zeros = _data_zeros(m, groups, from_zero)
    zero_started = _zero_started(m, groups) if from_zero else frozenset()
    for qi in range(0 if zero_started else 1, len(m.states)) if m.data else ():
        mapping = {f"acc.{fields[j].name}": expr_of(qi, kk) for kk, j in enumerate(m.control)}
        mapping |= {f"acc.{fields[j].name}": var(f"acc.fsm{qi}_{fields[j].name}", zeros[j][0]) for j in m.data
                    if qi or j in zero_started}
        for jj, j in enumerate(m.data):
            f = fields[j]
            if qi == 0 and j not in zero_started:
                continue
            roles[f"fsm{qi}_{f.name}"] = ("data", qi, jj)
            (update,) = substitute([loop.left.outputs[j]], mapping)
            type_, zero = zeros[j]
            added.append(Added(f"fsm{qi}_{f.name}", f"{f.name}_from{qi}", type_, zero, simplify(update),
                               f"{f.name} this list adds from {show_state(m, m.states[qi])} (from {zero})"))
    # slopes: where the data's coefficients are no function of the transition function
    # (2 * s in one mode, s in another), the product of the coefficients from each
    # control state, the initial one too, read by the combine as b's fields
    slopes: list[Added] | None = []
    if m.data and groups is None:
        slopes = _ring_slopes(m, m.data, expr_of, roles, deadline) if not _determined_or_not_affine(m) else []
    elif m.data:
        # over (max, +) or (min, +): where a reset the control does not hold (a negative
        # reading clears the peak in every mode) makes the coefficients no function of the
        # transition function, their products from each state, 0 or -inf (`tropical.slopes`);
        # a group over (+, *) beside them (a decayed sum beside a cheapest price) gets its own
        from thm3.synth import tropical
        slopes = tropical.slopes(m, expr_of, roles, groups)
        for sr, idx in groups.items():
            sub = tropical.restricted(m, idx)
            if sr.plus is Op.ADD and slopes is not None and not _determined_or_not_affine(sub):
                more = _ring_slopes(m, idx, expr_of, roles, deadline)
                slopes = None if more is None else slopes + more
    added += slopes or []
    slope_keys = {a.key for a in slopes or []}
    replaced: dict[str, Expr] = {}
    if time.monotonic() > deadline:
        raise Failed("time ran out reading the copies lift")
    related = 0
    if m.data:
        added, replaced, related = drop_copied_data(m, added, deadline, slope_keys, roles, relate)
    # (the combine by construction is over (+, *) and reads the initial state's data from
    # the field itself: none for copies from the zero)
    combine = None if zero_started else _copies_combine(m, added, roles, replaced, expr_of, bool(slopes))
    size = full_table_size(m)
    what = "the full transition table" if full else "the fewest copies that tell the transition functions apart"
    why = (f"{what}: {len(added)} fields, of the {size} of the full table ({len(m.states) - 1} other "
           f"reachable states x {len(m.control) + len(m.data)} fields); {m.describe()}")
    if related:
        why += ("; copies that are a fixed multiple, shift or linear combination of kept fields on folded lists read "
                "as it" + (", with factors of parameters" if related > 1 else ""))
    return LiftSet(tuple(added), why, full, combine, related)


def _ring_slopes(m: Machine, idx: tuple[int, ...], expr_of, roles: dict, deadline: float) -> list[Added] | None:
    """For a copies lift: the products of the (+, *) coefficients of the data fields `idx`
    (all of `m.data`, or one group over (+, *) beside tropical ones) from each control
    state, `fsm{q}_d{i}_{j}` with i, j positions in `m.data`; None where an update
    branches on the data (no slopes at all)."""
    loop = m.loop
    fields = loop.fields
    pos = {j: m.data.index(j) for j in idx}
    data_index = {f"acc.{fields[j].name}": pos[j] for j in idx}
    names = {pos[j]: fields[j].name for j in idx}
    dtype = Type.INT if all(fields[j].type is Type.INT for j in idx) else Type.REAL
    out = []
    for qi in range(len(m.states)):
        if time.monotonic() > deadline:
            raise Failed("time ran out reading the copies lift's slopes")
        control = {f"acc.{fields[j].name}": expr_of(qi, kk) for kk, j in enumerate(m.control)}
        for j in idx:
            jj = pos[j]
            for i in idx:
                ii = pos[i]
                slope = {pos[ll]: var(f"acc.fsm{qi}_d{pos[ll]}_{jj}", dtype) for ll in idx}
                (stepped,) = substitute([loop.left.outputs[i]], control)
                update = homogeneous(simplify(stepped), data_index, slope)
                if update is None:
                    return None
                one = 1 if ii == jj else 0
                roles[f"fsm{qi}_d{ii}_{jj}"] = ("slope", qi, ii, jj)
                hint = f"pw_from{qi}" if len(idx) == 1 else f"slope_{names[ii]}_{names[jj]}_from{qi}"
                out.append(Added(f"fsm{qi}_d{ii}_{jj}", hint, dtype, one if dtype is Type.INT else float(one),
                                 simplify(update), f"how {names[ii]} scales the {names[jj]} before the list, "
                                 f"from {show_state(m, m.states[qi])} (the product of its coefficients)"))
    return out


def _data_zeros(m: Machine, groups: dict | None, from_zero: bool = False) -> dict[int, tuple[Type, object]]:
    """Per data field: the type and start of its copies, the zero of its semiring
    (`groups`: the fields' semirings, None where all are (+, *)).  `from_zero`: every
    tropical copy from the zero (`_zero_started`)."""
    fields = m.loop.fields
    out = {j: (fields[j].type, 0 if fields[j].type is Type.INT else 0.0) for j in m.data}
    init = initial_state(m.loop)
    for s, idx in (groups or {}).items():
        if s.plus is not Op.ADD:
            # from the field's own start where that is finite (a worst level from 0: the
            # combine reads max(a's, b's copy) where the data never falls below it; the
            # prover decides), else from the zero, a Real (an Int has no infinity)
            out |= {j: (fields[j].type, init[j].arg) if math.isfinite(float(init[j].arg)) and not from_zero
                    else (Type.REAL, float(s.zero)) for j in idx}
    return out


def _passes_start(m: Machine, groups: dict | None, fields: frozenset[int], deadline: float) -> bool:
    """Whether, on sampled lists, a field of `fields` (over (max, +), (min, +) ...) reaches
    a value past its start on the semiring's side: below it under max, above it under
    min.  A copy from the start then is no offset of the composed map."""
    loop = m.loop
    lists = random_and_walked(m, deadline, seed=2, count=24, shortest=1, longest=8, walks=24)
    init = initial_state(loop)
    below = {j: s.plus is Op.MAX for s, idx in (groups or {}).items() for j in idx}
    with np.errstate(invalid="ignore"):
        for end in fold_batched(loop, lists):
            for j in fields:
                v, start = float(end[j]), float(init[j].arg)
                if not math.isfinite(start):
                    continue
                if (v < start) if below[j] else (v > start):
                    return True
    return False


def _scaled_start(groups: dict | None, fields: frozenset[int]) -> bool:
    """Whether a field of `fields` is over (max, *) or (min, *), where a start away from
    the zero is scaled with the data (min(P * 1000, V) is no offset however the data moves):
    its copies start at the zero only."""
    from thm3.synth.semiring import scaling
    return any(scaling(s) and set(idx) & fields for s, idx in (groups or {}).items())


def _zero_started(m: Machine, groups: dict | None) -> frozenset[int]:
    """The data fields over (max, +) or (min, +) of a group that starts away from its zero:
    their copies from the zero, the initial state's too, hold T_q(zero) where the copies
    from the start do not (a time from 0.0 that a reading may lower below 0).  The
    fields of a group go together: T_q(zero) starts every one of them at the zero."""
    init = initial_state(m.loop)
    return frozenset(j for s, idx in (groups or {}).items() if s.plus is not Op.ADD
                     and any(float(init[i].arg) != float(s.zero) for i in idx) for j in idx)


def _copies_combine(m: Machine, added: list[Added], roles: dict, replaced: dict, expr_of, slopes: bool) -> Fn | None:
    """The lift's combine by construction (`thm3.synth.copies`), or None where the data's
    coefficients are neither held by slopes nor all 1, or the data is not affine."""
    from thm3.synth import copies
    loop = m.loop
    fields = loop.fields
    kept = {a.key: a.type for a in added}
    try:
        mods = moduli(m, affine_rows(m)) if m.data else {}
        if m.data and not slopes and not _unit_coefficients(m):
            return None
    except Failed:
        return None

    def field(key: str, type_: Type) -> Expr:
        if key in kept:
            return var(f"acc.{key}", type_)
        if f"acc.{key}" in replaced:
            return replaced[f"acc.{key}"]
        raise copies.Failed(f"{key} is neither kept nor read back")

    def data_expr(q: int, j: int) -> Expr:
        f = fields[m.data[j]]
        return var(f"acc.{f.name}", f.type) if q == 0 else field(f"fsm{q}_{f.name}", f.type)

    dtype = Type.INT if all(fields[j].type is Type.INT for j in m.data) else Type.REAL

    def slope_expr(q: int, i: int, j: int) -> Expr:
        return field(f"fsm{q}_d{i}_{j}", dtype)

    lifted = with_added(loop, added)
    try:
        return copies.copies_combine(loop, lifted.fields, m.states, m.control, m.data, roles, expr_of, data_expr,
                                     slope_expr if slopes else None, mods)
    except (copies.Failed, Failed):
        return None


def _unit_coefficients(m: Machine) -> bool:
    """Whether every step's coefficient matrix of the data is the identity (a count, a sum
    the control gates): the data the lists add then simply add up."""
    rows = affine_rows(m)
    if any(symbolic(c) for row in rows.values() for lin in row for k, c in lin.items() if k not in ("", MODULUS)):
        return False
    step_matrix = step_matrices(m, rows)
    eye = np.eye(len(m.data))
    return all(np.array_equal(step_matrix(q, c), eye) for q in range(len(m.states)) for c in range(len(m.cells)))


def full_table_size(m: Machine) -> int:
    """The fields the full table adds: every field, copied from every other reachable
    state, and where the data's coefficients need them, the slopes from every state."""
    slopes = 0 if not m.data or _determined_or_not_affine(m) else len(m.states) * len(m.data) ** 2
    return (len(m.states) - 1) * (len(m.control) + len(m.data)) + slopes


def full_table(loop: Loop, deadline: float | None = None) -> tuple[int, int] | None:
    """For a loop whose step is finite-state: its reachable control states and the fields
    the full table adds (`full_table_size`), the fallback the minimal lifts of
    `lift_candidates` replace; None where the loop is not in the class."""
    try:
        m = recognise(loop, deadline)
    except Failed:
        return None
    return len(m.states), full_table_size(m)


def _determined_or_not_affine(m: Machine) -> bool:
    """`coefficients_determined`, or True where the data is not affine in itself with
    constant coefficients (no slope to add: the copies alone are tried)."""
    try:
        return coefficients_determined(m)
    except Failed:
        return True
