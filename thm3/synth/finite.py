"""Finite-state steps: the step read as a transition function, the combine as composition.

A loop is in the class when its control fields (Bool flags, Int fields, selections among
constants) reach finitely many states from the initial one, and the element enters their
updates only through finitely many predicates (or takes finitely many values under the
loop's `assert`): the element domain splits into cells, one transition table a cell, and
the lists' transition functions, restricted to the reachable states, form a finite
monoid (Hillis & Steele 1986; Mytkowicz, Musuvathi & Schulte, ASPLOS 2014), found here by
breadth-first search within a bound.  Where the state determines its own transition
function on the reachable states, the combine is the composition: a selection (`where`
chains) over the finitely many values, written in the state's own fields.  Fields outside
the control part (counts, sums) may be linear in themselves with coefficients the control
state chooses: one affine map a control state (a weighted automaton), composed.  The
lifting side (`lift_candidates`) gives the copies of the state reached from the other
reachable states, minimised on the monoid.  The prover still decides every candidate.

This module runs the synthesis and keeps every public name of the route; the stages live
beside it: `finite_machine` (the machine, `Failed`, `Added`), `finite_recognise` (cells,
reachable states, the monoid, the readings), `finite_tables` (`where` trees over the
control), `finite_affine` and `finite_fit` (the linear data's algebra and fits),
`finite_walks` (sampled lists), `finite_lift` and `finite_drop` (copies lifts) and
`finite_facts` (facts for the invariant search, witnesses for the lift search)."""
from __future__ import annotations

import itertools
import math
import time

import numpy as np

from thm3.ir import Expr, Fn, Loop, Op, Type, initial_state, var
from thm3.semantics.evaluate import PYTHON, compiled
from thm3.synth.finite_machine import Added, Failed, Machine, cell_elements, first_diff, show_state, with_added
from thm3.synth.finite_recognise import (MAX_ATOMS, MAX_CELLS, MAX_FEATURE_VALUES, MAX_MONOID, MAX_PREDICATES,
                                         MAX_STATES, atom_cells, determined_reading, element_atoms, element_features,
                                         explore, finite_elements, recognise, replace_atoms, transition_monoid,
                                         unbounded_by_intervals)
from thm3.synth.finite_tables import expr_tree, table_tree
from thm3.synth.finite_affine import (HOIST_NODES, MODULUS, affine_form, affine_rows, coefficient_products,
                                      coefficients_determined, composes, data_steps, hoisted, moduli, symbolic)
from thm3.synth.finite_walks import MIN_PER_END, fold_batched, sampled_ends, walked_lists
from thm3.synth.finite_fit import MOD_COEFFICIENTS, MOD_TERMS, RESIDUES, data_combine, independent_columns, solve_mod
from thm3.synth.finite_drop import DROP_WALKS, MAX_EXPONENT
from thm3.synth.finite_lift import LiftSet, MAX_CHOICES, MAX_LIFT_MONOID, full_table, full_table_size, lift_candidates
from thm3.synth.finite_facts import MAX_DATA_FACTS, control_data_facts, monoid_witnesses, reachable_invariant

__all__ = ["Added", "DROP_WALKS", "Failed", "HOIST_NODES", "LiftSet", "MAX_ATOMS", "MAX_BOX", "MAX_CELLS",
           "MAX_CHOICES", "MAX_DATA_FACTS", "MAX_EXPONENT", "MAX_FEATURE_VALUES", "MAX_HINTED_STATES",
           "MAX_LIFTED_STATES", "MAX_LIFT_MONOID", "MAX_MONOID", "MAX_PREDICATES", "MAX_STATES", "MIN_PER_END",
           "MODULUS", "MOD_COEFFICIENTS", "MOD_TERMS", "Machine", "NARROW_FIRST", "RECHECKS", "REFIT_ROUNDS",
           "REFUTING_SPLITS", "RESIDUES", "RETRY_SECONDS", "affine_form", "affine_rows", "atom_cells",
           "cell_elements", "coefficient_products", "coefficients_determined", "composes", "control_data_facts",
           "data_steps", "determined_reading", "element_atoms", "element_features", "expr_tree", "finite_elements",
           "fold_batched", "full_table", "full_table_size", "hoisted", "independent_columns", "lift_candidates",
           "moduli", "monoid_witnesses", "reachable_invariant", "recognise", "sampled_ends", "show_state",
           "solve_mod", "symbolic", "synthesize", "walked_lists", "with_added"]

# a lifted loop that came with its combine (`Loop.combine_hint`): its reachable lifted
# states, for the proofs' split (a debounce over five readings lifted: 81)
MAX_HINTED_STATES = 256
MAX_LIFTED_STATES = 512     # ... for a lifted loop that came with its combine (a CSV scanner's 36 copies: 283)
NARROW_FIRST = 10       # the narrow reading first where the wide one's table of state pairs is this many times bigger
RETRY_SECONDS = 4.0     # left for a second reading up to MAX_HINTED_STATES where MAX_STATES fails
REFIT_ROUNDS = 6        # the data's forms fitted again on the lists that refuted them, at most
REFUTING_SPLITS = 96    # splits of walked lists (each half up to 3 * the sampled lengths) a round
RECHECKS = 3            # rounds more where a bounded field was read as data (`synthesize`)


def synthesize(loop: Loop, deadline: float) -> tuple[Fn, str]:
    """The composition combine of a loop in the class, or `Failed` with the class it was
    recognised as and what failed.  Past MAX_STATES control states, read again up to
    MAX_HINTED_STATES where RETRY_SECONDS are left (a lifted loop analysed alone: the
    copies lift of a base64 scanner has 93 reachable states).  Where the first reading
    makes a bounded field data to stay within MAX_STATES, the wider reading with it as
    control goes first (a pretokenizer's leading run, capped at 2: what b adds to the
    count of long runs depends on it in no form fitted on samples; as control, 73 states,
    the combine is a table), and the first reading's combine, where it is the answer, is
    checked on longer lists once more.  Where the wide reading's table of state pairs is
    more than NARROW_FIRST times the narrow one's (a check digit mod 10 beside a phase:
    100 states against 2, whose table's laws took 70 s where the narrow reading's
    `(a.w + 4 * b.plain - b.w) % 10` is proved at once), the narrow reading goes first,
    and the wide one only where it fails or is refuted on longer lists."""
    wide = None
    try:
        narrow = determined_reading(loop, deadline)
        bounded = set(narrow.data) - unbounded_by_intervals(loop)
        if bounded and deadline - time.monotonic() >= RETRY_SECONDS:
            wide = _wider(loop, deadline, len(narrow.states))
            if wide is not None and len(wide.states) ** 2 > NARROW_FIRST * len(narrow.states) ** 2:
                try:
                    fn, how = _composed(narrow, deadline)
                    if not any(_refuting_lists(narrow, fn, deadline, seed=REFIT_ROUNDS + 1 + k)
                               for k in range(RECHECKS)):
                        return fn, how
                except Failed:
                    pass
                return _composed(wide, deadline)
            if wide is not None:
                try:
                    return _composed(wide, deadline)
                except Failed:
                    pass
        fn, how = _composed(narrow, deadline)
        if not bounded or not any(_refuting_lists(narrow, fn, deadline, seed=REFIT_ROUNDS + 1 + k)
                                  for k in range(RECHECKS)):
            return fn, how
        raise Failed(f"recognised as {narrow.describe()}; its data's forms are refuted on longer lists, "
                     f"with {', '.join(loop.fields[i].name for i in sorted(bounded))} read as data")
    except Failed:
        if wide is not None or deadline - time.monotonic() < RETRY_SECONDS:
            raise
        wide = _wider(loop, deadline, MAX_STATES)
        if wide is None:
            raise
    return _composed(wide, deadline)


def _wider(loop: Loop, deadline: float, than: int) -> Machine | None:
    """The reading up to MAX_HINTED_STATES, where it has more than `than` states."""
    try:
        wide = determined_reading(loop, deadline, most=MAX_HINTED_STATES)
    except Failed:
        return None
    return wide if len(wide.states) > than else None


def _composed(m: Machine, deadline: float) -> tuple[Fn, str]:
    """`synthesize` on the machine `m`."""
    loop = m.loop
    by_state, clash = m.determined()
    if clash is not None:
        f, g = clash
        raise Failed(f"recognised as {m.describe()}; but the state does not determine its transition "
                     f"function: lists {_word(m, f)} and {_word(m, g)} reach "
                     f"{show_state(m, m.states[f[0]])} from the start and differ from "
                     f"{show_state(m, m.states[first_diff(f, g)])}: a lift is needed")
    fields = loop.fields
    a = {i: var(f"a.{fields[i].name}", fields[i].type) for i in range(len(fields))}
    b = {i: var(f"b.{fields[i].name}", fields[i].type) for i in range(len(fields))}
    outs: dict[int, Expr] = {}
    # control: out(a, b) = f_b(a), a table over (a's state, b's state): over the box of
    # the fields' values where the state determines its function there too (the laws
    # then hold on every state the fields' ranges allow), else over the reachable states
    box = _boxed(m, deadline)
    table_m, table_by = (box if box is not None else (m, by_state))
    rows = [(q, r) for r in table_by for q in range(len(table_m.states))]
    for k, i in enumerate(m.control):
        values = {(q, r): table_m.states[table_by[r][q]][k] for q, r in rows}
        outs[i] = table_tree(table_m, rows, values, a, b, fields[i].type, deadline)
    names = tuple((f"a.{f.name}", f.type) for f in fields) + tuple((f"b.{f.name}", f.type) for f in fields) \
        + tuple((d.name, d.type) for d in loop.params)
    how = f"composition of transition functions ({m.describe()})"
    if not m.data:
        return Fn(names, tuple(outs[i] for i in range(len(fields)))), how
    # the data's forms are fitted on sampled lists: where a split of longer lists refutes
    # them (an end state whose sampled lists all had b's count at 0 reads the count as
    # the constant 0), b's lists of those splits join the samples and the forms are fitted
    # again, REFIT_ROUNDS times at most
    extra: list = []
    memo: dict = {}
    for round_ in range(REFIT_ROUNDS + 1):
        outs.update(_data_parts(m, by_state, a, b, deadline, extra, memo))
        fn = Fn(names, tuple(outs[i] for i in range(len(fields))))
        refuting = _refuting_lists(m, fn, deadline, seed=round_)
        if not refuting or time.monotonic() > deadline:
            break
        extra += refuting
    if refuting:
        raise Failed(f"recognised as {m.describe()}; the data's forms are refuted on lists after "
                     f"{REFIT_ROUNDS} refits")
    if memo.get("groups"):
        how = how[:-1] + "; data over " + ", ".join(
            f"{s.name}: {', '.join(m.names(idx))}" for s, idx in memo["groups"].items()) + ")"
    return fn, how


def _data_parts(m: Machine, by_state: dict, a: dict, b: dict, deadline: float, extra, memo: dict) -> dict:
    """The data fields of the combine: over (+, *) by `data_combine`; where some are over
    (max, +) or (min, +) (`thm3.synth.tropical`), each semiring's fields apart."""
    from thm3.synth import tropical
    if "groups" not in memo:
        memo["groups"] = tropical.groups(m)
    groups = memo["groups"]
    if groups is None:
        return data_combine(m, by_state, a, b, deadline, extra=extra, memo=memo)
    out = {}
    for s, idx in groups.items():
        sub, sub_memo = tropical.restricted(m, idx), memo.setdefault(s.name, {})
        if s.plus is Op.ADD:
            out.update(data_combine(sub, by_state, a, b, deadline, extra=extra, memo=sub_memo))
        else:
            out.update(tropical.combine(s, sub, by_state, a, b, deadline, extra=extra, memo=sub_memo, whole=m))
    return out


def _refuting_lists(m: Machine, fn: Fn, deadline: float, seed: int = 0) -> list[tuple[list, dict]]:
    """The right halves (xs, params) of random splits of walked lists on which `fn`
    disagrees with the fold, at most 16 (none where time is short or the lists cannot be
    walked): the data's forms were fitted on shorter lists."""
    from thm3.semantics.equality import states_close
    from thm3.semantics.samples import Domain
    if time.monotonic() > deadline:
        return []
    loop = m.loop
    rng = np.random.default_rng(1 + seed)
    try:
        dom = Domain(loop)
        longest = 3 * min(16, max(6, 2 * len(m.states) + 2))
        lists = walked_lists(m, dom, rng, 2 * REFUTING_SPLITS, longest)
    except (Failed, ValueError):
        return []
    pairs = [(lists[2 * i], lists[2 * i + 1]) for i in range(len(lists) // 2)
             if lists[2 * i][1] == lists[2 * i + 1][1]]
    wholes = [(xs + ys, p) for (xs, p), (ys, _) in pairs]
    folded = fold_batched(loop, [x for pair in pairs for x in pair] + wholes)
    run = compiled(fn.outputs, PYTHON)
    names = [n for n, _ in fn.inputs]
    out = []
    for n, ((xs, p), (ys, _)) in enumerate(pairs):
        ha, hb, want = folded[2 * n], folded[2 * n + 1], folded[2 * len(pairs) + n]
        env = dict(zip(names, list(ha) + list(hb) + [p[d.name] for d in loop.params]))
        try:
            got = tuple(run(env))
        except (ArithmeticError, ValueError, TypeError):
            continue
        if not states_close(got, tuple(want)):
            out.append((ys, p))
            if len(out) >= 16:
                break
    return out


MAX_BOX = 1024


def _boxed(m: Machine, deadline: float):
    """The machine on the product of the control fields' reachable values (the box),
    with b's side still the reachable states: (machine, reachable state -> its function
    on the box); None where the box is too large, not closed under the step, or the
    state does not determine its function on it."""
    loop = m.loop
    values = [sorted({s[k] for s in m.states}, key=lambda v: (str(type(v)), v)) for k in range(len(m.control))]
    if math.prod(len(v) for v in values) > MAX_BOX or math.prod(len(v) for v in values) == len(m.states):
        return None
    init = [e.arg for e in initial_state(loop)]
    outputs = list(replace_atoms(list(loop.left.outputs), m.atoms, [f"cell.{i}" for i in range(len(m.atoms))])) \
        if m.atoms else list(loop.left.outputs)
    box = list(itertools.product(*values))
    got = explore(loop, list(m.control), outputs, list(m.cells), init, deadline, starts=box, limit=len(box) + 1)
    if not isinstance(got, tuple) or len(got[0]) != len(box):
        return None
    states, table = got
    try:
        monoid = transition_monoid(table, len(states), deadline)
    except Failed:
        return None
    bm = Machine(loop, m.control, m.data, m.atoms, m.cells, states, table, monoid)
    where = {s: n for n, s in enumerate(states)}
    reach = {where[s] for s in m.states}
    by_state: dict[int, tuple] = {0: bm.identity}
    for f in monoid:
        if f[0] not in reach:
            continue
        got_f = by_state.setdefault(f[0], f)
        if got_f != f:
            return None
    return bm, by_state


def _word(m: Machine, f) -> str:
    cells = m.monoid.get(f, ())
    return "[" + ", ".join(_cell_text(m, c) for c in cells) + "]"


def _cell_text(m: Machine, c: int) -> str:
    cell = m.cells[c]
    if not m.atoms:
        return "/".join(f"{v.arg}" for v in cell.values())
    return " & ".join((("" if cell[f"cell.{i}"].arg else "not ") + repr(a)) if a.type is Type.BOOL
                      else f"{a!r} == {cell[f'cell.{i}'].arg}" for i, a in enumerate(m.atoms))
