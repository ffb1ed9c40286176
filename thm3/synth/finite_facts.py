"""Facts the finite-state reading offers the rest of the pipeline (`thm3.synth.finite`):
"the control holds one of its reachable states" and "at control state s, data field f is
k" for the invariant search to prove inductive, and pairs of lists whose transition
functions differ, which a lift must tell apart."""
from __future__ import annotations

import itertools
import math
import time

import numpy as np

from thm3.ir import Expr, Loop, Op, Type, const, var
from thm3.synth.finite_machine import Failed, Machine, cell_elements, first_diff, plain_value
from thm3.synth.finite_recognise import MAX_STATES, determined_reading, recognise
from thm3.synth.finite_walks import fold_batched, steered_lists, walked_lists


def reachable_invariant(loop: Loop, deadline: float | None = None, most: int = MAX_STATES) -> Expr | None:
    """The fact "the control fields hold one of the reachable states" (a disjunction of
    equalities), for the invariant search to prove inductive; None outside the class,
    past `most` states, or where the fields' own ranges already say it (the box is
    reached whole).  The combine's table is read on reachable operands only (b's state
    stands for a transition function only where some list reaches it), so its laws
    need this fact.  The machine is the one the combine is tabled on (`determined_reading`:
    a lift's bounded counts read as data), up to the route's MAX_STATES (a four-mode
    scanner's lift: 57 states, whose associativity fails on 1,553 paths without it)."""
    try:
        m = determined_reading(loop, time.monotonic() + 2.0 if deadline is None else deadline, most)
    except Failed:
        return None
    if len(m.states) > most or len(m.states) < 2:
        return None
    values = [{s[k] for s in m.states} for k in range(len(m.control))]
    if math.prod(len(v) for v in values) == len(m.states):
        return None
    conjs = [_control_equals(m, values, s) for s in m.states]
    if any(c is None for c in conjs):
        return None
    if len(conjs) <= MAX_STATES:
        out = conjs[0]
        for conj in conjs[1:]:
            out = Expr(Op.OR, Type.BOOL, (out, conj))
        return out
    while len(conjs) > 1:       # balanced past MAX_STATES: 284 disjuncts in a chain overflow the recursion
        conjs = [Expr(Op.OR, Type.BOOL, (conjs[i], conjs[i + 1])) if i + 1 < len(conjs) else conjs[i]
                 for i in range(0, len(conjs), 2)]
    return conjs[0]


def _control_equals(m: Machine, values: list[set], st: tuple) -> Expr | None:
    """"The control fields hold the tuple st" (those that take one value only left out;
    None where every one does)."""
    conj = None
    for k, i in enumerate(m.control):
        if len(values[k]) == 1:
            continue
        f = m.loop.fields[i]
        x = var(f"acc.{f.name}", f.type)
        eq = x if f.type is Type.BOOL and st[k] is True else \
            Expr(Op.NOT, Type.BOOL, (x,)) if f.type is Type.BOOL else \
            Expr(Op.EQ, Type.BOOL, (x, const(st[k], f.type)))
        conj = eq if conj is None else Expr(Op.AND, Type.BOOL, (conj, eq))
    return conj


MAX_DATA_FACTS = 400     # candidates "at control state s, data field f is k" at most


def control_data_facts(loop: Loop, deadline: float) -> list[Expr]:
    """Candidate facts "the control is not s, or data field f is k" for each reachable
    control state s of the machine the combine is tabled on (`determined_reading`) and
    each data field that is the constant k on every sampled list ending in s (at least
    two): a warm-up phase sets a trend to 0 and a lift's slope from the first phase to 0
    for good.  A composed combine reads the copy that equals a slope on every reachable
    state, and its step law holds on the states these facts admit only.  Unproved: the
    invariant search keeps those that are inductive.  Empty outside the class or past
    MAX_DATA_FACTS."""
    from thm3.semantics.samples import Domain
    try:
        m = determined_reading(loop, deadline)
    except Failed:
        return []
    if not m.data or len(m.states) < 2:
        return []
    rng = np.random.default_rng(0)
    dom = Domain(loop)
    longest = min(16, max(6, 2 * len(m.states) + 2))
    lists = walked_lists(m, dom, rng, 64, longest)
    lists += [(xs, p) for xs, p, _ in steered_lists(m, dom, rng, list(range(len(m.states))), longest,
                                                       per_target=4 if len(m.states) <= 24 else 2)]
    fields = loop.fields
    by_state: dict[tuple, list] = {}
    for whole in fold_batched(loop, lists):
        st = tuple(plain_value(whole[j], fields[j].type) for j in m.control)
        by_state.setdefault(st, []).append([plain_value(whole[j], fields[j].type) for j in m.data])
    values = [{s[k] for s in m.states} for k in range(len(m.control))]
    out: list[Expr] = []
    for st, rows in by_state.items():
        if len(rows) < 2 or st not in m.states:
            continue
        conj = _control_equals(m, values, st)
        if conj is None:
            continue
        for jj, j in enumerate(m.data):
            first = rows[0][jj]
            if not math.isfinite(first) or any(r[jj] != first for r in rows):
                continue
            f = fields[j]
            fact = Expr(Op.EQ, Type.BOOL, (var(f"acc.{f.name}", f.type), const(first, f.type)))
            out.append(Expr(Op.OR, Type.BOOL, (Expr(Op.NOT, Type.BOOL, (conj,)), fact)))
            if len(out) > MAX_DATA_FACTS:
                return []
    return out


def monoid_witnesses(loop: Loop, deadline: float, limit: int = 12) -> list[tuple[list, list, list]]:
    """Pairs of lists that end in the same state but whose transition functions differ,
    with a list that leads to a state where they do: (xs1, xs2, ys) such that
    h(xs1) == h(xs2) and h(ys + xs1) != h(ys + xs2), read off the monoid (a lift must
    tell each such pair apart).  Elements as tuples of the element parameters; the
    caller folds them to confirm."""
    try:
        m = recognise(loop, deadline)
    except Failed:
        return []
    reps = cell_elements(m)
    if reps is None:
        return []
    words = {m.identity: ()} | dict(m.monoid)
    reach = {}
    for f, w in sorted(words.items(), key=lambda t: len(t[1])):
        reach.setdefault(f[0], w)
    groups: dict[int, list[tuple]] = {}
    for f in words:
        groups.setdefault(f[0], []).append(f)
    out = []
    for fs in groups.values():
        for f, g in itertools.combinations(fs, 2):
            q = first_diff(f, g)
            if q not in reach:
                continue
            out.append(tuple([reps[c] for c in w] for w in (words[f], words[g], reach[q])))
            if len(out) >= limit:
                return out
    return out
