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
reachable states, minimised on the monoid.  The prover still decides every candidate."""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from fractions import Fraction

import numpy as np

from thm3.ir import (COMPARISONS, Expr, Fn, Loop, Op, Type, const, free_vars, initial_state, substitute, transform,
                     var, walk)
from thm3.ir.simplify import simplify
from thm3.synth.powers import parameter_bases, read_power, read_power_product
from thm3.semantics.evaluate import PYTHON, compiled
from thm3.semantics.z3_plain import to_z3
from thm3.errors import Thm3Error

# a lifted loop that came with its combine (`Loop.combine_hint`): its reachable lifted
# states, for the proofs' split (a debounce over five readings lifted: 81)
MAX_HINTED_STATES = 256
MAX_LIFTED_STATES = 512     # ... for a lifted loop that came with its combine (a CSV scanner's 36 copies: 283)
MAX_STATES = 64         # reachable control states (a 4-mode scanner lifted by its copies: 57)
NARROW_FIRST = 10       # the narrow reading first where the wide one's table of state pairs is this many times bigger
RETRY_SECONDS = 4.0     # left for a second reading up to MAX_HINTED_STATES where MAX_STATES fails
MAX_MONOID = 400        # transition functions of lists
MAX_CHOICES = 20000     # sets of copies tried for the fewest that tell the functions apart (then the full table)
MAX_LIFT_MONOID = 4096  # ... where only a lift is read off them (a dwell thermostat's 8 states: 1,722)
REFIT_ROUNDS = 6        # the data's forms fitted again on the lists that refuted them, at most
REFUTING_SPLITS = 96    # splits of walked lists (each half up to 3 * the sampled lengths) a round
RECHECKS = 3            # rounds more where a bounded field was read as data (`synthesize`)
MIN_PER_END = 6         # sampled lists that end in each control state, at least, for the data's fits
MAX_CELLS = 16          # cells of the element domain
MAX_ATOMS = 5           # predicates Z3 cannot read (2**MAX_ATOMS sign vectors at most)
MAX_PREDICATES = 24     # predicates on the element, split into cells by Z3


class Failed(Thm3Error):
    """Not in the class, or in it but no combine: the message says which and why."""


@dataclass(frozen=True)
class Machine:
    """The step as a transition function.  `control`: indices of the finite fields;
    `data`: the others (linear in themselves, or empty).  `cells`: per cell, the
    substitution that stands for the element in `left` (atoms -> Bool constants, or the
    element's value); `states`: the reachable control states (tuples, the initial first);
    `table[c][i]`: the index of the state cell c leads state i to; `monoid`: the
    transition functions of nonempty lists (tuples of state indices) -> a shortest word
    of cells giving it."""
    loop: Loop
    control: tuple[int, ...]
    data: tuple[int, ...]
    atoms: tuple[Expr, ...]
    cells: tuple[dict, ...]
    states: tuple[tuple, ...]
    table: tuple[tuple[int, ...], ...]
    monoid: dict

    @property
    def identity(self) -> tuple[int, ...]:
        return tuple(range(len(self.states)))

    def describe(self) -> str:
        kind = "finite" if not self.data else "finite control with linear data"
        return (f"{kind}: {len(self.states)} reachable states of ({', '.join(self.names(self.control))}), "
                f"{len(self.cells)} cells of the element, {len(self.monoid)} transition functions")

    def names(self, idx) -> list[str]:
        return [self.loop.fields[i].name for i in idx]

    def determined(self) -> tuple[dict, tuple | None]:
        """State reached from the initial one -> its transition function, where that is
        unique; else the first two functions that share a state (None when none do)."""
        by_state: dict[int, tuple] = {0: self.identity}
        clash = None
        for f in self.monoid:
            got = by_state.setdefault(f[0], f)
            if got != f and clash is None:
                clash = (got, f)
        return by_state, clash


# --- recognition -------------------------------------------------------------------

def _state_free(e: Expr) -> bool:
    return not any(n.startswith("acc.") for n in free_vars([e]))


def element_atoms(loop: Loop, outputs) -> list[Expr]:
    """The predicates through which the element enters `outputs`: the largest Bool
    subterms over the element and parameters only (comparisons, Bool elements, and their
    `and`/`or`/`not`), each kept whole.  A base64 character class, ten comparisons joined
    by `or`, is one predicate: its cells are those of the step, not of its comparisons."""
    elements = {d.name for d in loop.elements}
    out: list[Expr] = []
    seen: set[Expr] = set()

    def visit(e: Expr):
        names = free_vars([e])
        if e.type is Type.BOOL and names & elements and _state_free(e) and (
                e.op in COMPARISONS or e.op is Op.VAR or e.op in (Op.AND, Op.OR, Op.NOT)):
            if e not in seen:
                seen.add(e)
                out.append(e)
            return
        for s in e.src:
            visit(s)

    for e in outputs:
        visit(e)
    return out


MAX_FEATURE_VALUES = 8      # values of an Int term of the element read as control (x % 4, a tag's low bits)


def element_features(loop: Loop, outputs, atoms: list[Expr]) -> list[Expr]:
    """The Int terms of the element (outside its predicates) that take at most
    MAX_FEATURE_VALUES values under the preconditions (x % 4: a record's length read off
    its header byte), where they are all the element a field's update reads: that field
    then reads the element through finitely many values, as it reads a predicate, and may
    be control.  Each is split into its values as a predicate into its signs."""
    import z3
    elements = {d.name for d in loop.elements}
    inside = set(atoms)

    def reads(e: Expr) -> bool:         # the element, past its predicates
        if e in inside:
            return False
        return e.arg in elements if e.op is Op.VAR else any(reads(x) for x in e.src)

    def leaks(e: Expr, out: list):
        if e in inside:
            return
        if e.type is Type.INT and _state_free(e) and reads(e):
            out.append(e)
            return
        for x in e.src:
            leaks(x, out)

    small: dict[Expr, bool] = {}
    pre = None
    mixed = any(d.type not in (Type.INT, Type.BOOL) for d in loop.elements)

    def few(e: Expr) -> bool:
        nonlocal pre
        if e in small:
            return small[e]
        ok = False
        # (an Int element read as it is counts too, a sync bit `assert 0 <= sync <= 1` beside
        # a Real dt; where every element is Int or Bool, `finite_elements` reads them by value)
        if e.op is not Op.CONST and (e.op is not Op.VAR or mixed):
            syms: dict = {}
            t = to_z3(e, syms)
            if pre is None:
                pre = [to_z3(c, syms) for c in loop.preconditions]
            if t is not None and not any(c is None for c in pre) and \
                    not {str(k) for k in syms} - elements - {d.name for d in loop.params}:
                solver = z3.Solver()
                solver.set("timeout", 200)
                solver.add(*pre)
                v = z3.Int("feature_value")
                solver.add(v == t)
                seen = 0
                while seen <= MAX_FEATURE_VALUES:
                    got = solver.check()
                    if got == z3.unsat:
                        ok = True
                        break
                    if got != z3.sat:
                        break
                    solver.add(v != solver.model().eval(v, model_completion=True))
                    seen += 1
        small[e] = ok
        return ok

    out: list[Expr] = []
    for e in outputs:
        parts: list = []
        leaks(e, parts)
        if parts and all(few(x) for x in parts):
            for x in parts:
                if x not in out:
                    out.append(x)
    return out


def atom_cells(loop: Loop, atoms: list[Expr]) -> list[tuple[bool, ...]]:
    """The sign vectors of `atoms` that some element satisfies under the loop's
    preconditions (for some parameters): each one cell, enumerated by Z3 one model at a
    time (each found vector blocked), so ten predicates that split the element into four
    cells cost five checks, not 1,024.  In the order of `itertools.product((True,
    False))`.  Where Z3 cannot read an atom, every sign vector is kept (more cells: the
    monoid found is then a superset), at most 2 ** MAX_ATOMS of them; past MAX_CELLS
    cells, `Failed`."""
    import z3
    syms: dict = {}
    terms = [to_z3(a, syms) for a in atoms]
    pre = [to_z3(p, syms) for p in loop.preconditions]
    if any(t is None for t in terms) or any(p is None for p in pre):
        if any(a.type is not Type.BOOL for a in atoms):
            raise Failed("Z3 cannot split the element by its values")
        if len(atoms) > MAX_ATOMS:
            raise Failed(f"the element enters through {len(atoms)} predicates Z3 cannot all read "
                         f"(at most {MAX_ATOMS})")
        return list(itertools.product((True, False), repeat=len(atoms)))
    bits = [z3.Bool(f"cell_bit_{i}") if a.type is Type.BOOL else z3.Int(f"cell_value_{i}")
            for i, a in enumerate(atoms)]
    s = z3.Solver()
    s.set("timeout", 200)
    s.add(*pre)
    s.add(*[b == t for b, t in zip(bits, terms)])
    out = []
    while True:
        got = s.check()
        if got == z3.unsat:
            break
        if got != z3.sat:
            if any(a.type is not Type.BOOL for a in atoms):
                raise Failed("Z3 cannot split the element by its values")
            if len(atoms) > MAX_ATOMS:
                raise Failed(f"Z3 cannot split the element by its {len(atoms)} predicates")
            return list(itertools.product((True, False), repeat=len(atoms)))
        model = s.model()
        v = tuple(z3.is_true(model.eval(b, model_completion=True)) if a.type is Type.BOOL
                  else model.eval(b, model_completion=True).as_long() for a, b in zip(atoms, bits))
        out.append(v)
        if len(out) > MAX_CELLS:
            raise Failed(f"more than {MAX_CELLS} cells of the element")
        s.add(z3.Or(*[b != (z3.BoolVal(x) if a.type is Type.BOOL else z3.IntVal(x))
                      for a, b, x in zip(atoms, bits, v)]) if bits else z3.BoolVal(False))
    return sorted(out, key=lambda v: tuple(not x if isinstance(x, bool) else x for x in v))


def finite_elements(loop: Loop) -> list[dict] | None:
    """Every value of the (Int or Bool) elements the preconditions admit, where they are
    at most MAX_CELLS (enumerated with Z3); None where they are more or not all Int."""
    import z3
    if not loop.preconditions or any(d.type not in (Type.INT, Type.BOOL) for d in loop.elements):
        return None
    params = {d.name for d in loop.params}
    syms: dict = {}
    pre = [to_z3(p, syms) for p in loop.preconditions]
    if any(p is None for p in pre) or any(n in params for n in syms):
        return None
    xs = [syms.get(d.name) for d in loop.elements]
    if any(x is None for x in xs):
        return None
    s = z3.Solver()
    s.set("timeout", 500)
    s.add(*pre)
    out = []
    while len(out) <= MAX_CELLS:
        got = s.check()
        if got == z3.unsat:
            return out
        if got != z3.sat:
            return None
        m = s.model()
        vals = [m.eval(x, model_completion=True) for x in xs]
        out.append({d.name: (z3.is_true(v) if d.type is Type.BOOL else v.as_long())
                    for d, v in zip(loop.elements, vals)})
        s.add(z3.Or(*[x != v for x, v in zip(xs, vals)]))
    return None


def recognise(loop: Loop, deadline: float | None = None, as_data: frozenset = frozenset(),
              most: int = MAX_STATES, functions: int = MAX_MONOID) -> Machine:
    """The loop as a machine, or `Failed` saying why it is not one (fast on loops outside
    the class: a syntactic test first, then a bounded search).  The fields at the indices
    `as_data` are data even where they are finite (a bounded count read as a sum)."""
    deadline = time.monotonic() + 2.0 if deadline is None else deadline
    fields = loop.fields
    if any(f.type is Type.VEC for f in fields):
        raise Failed("a Vec field")
    elements = {d.name for d in loop.elements}
    params = {d.name for d in loop.params}
    outputs = list(loop.left.outputs)
    atoms = element_atoms(loop, outputs)
    if len(atoms) <= MAX_PREDICATES:
        atoms += element_features(loop, outputs, atoms)
    cells: list[dict]
    if len(atoms) <= MAX_PREDICATES:
        outputs_c = list(_replace_atoms(outputs, atoms, [f"cell.{i}" for i in range(len(atoms))]))
    else:
        outputs_c = outputs
    # control: fields whose update reads no element (past the atoms) and no parameter,
    # closed under what they read; decided on the text before any solver is asked
    names = {f"acc.{f.name}": i for i, f in enumerate(fields)}
    control = _closed([i for i, e in enumerate(outputs_c) if not (free_vars([e]) & (elements | params))], outputs_c,
                      names)
    by_value = None
    if len(control) < len(fields) and not any(free_vars([outputs[i]]) & params for i in range(len(fields))):
        by_value = finite_elements(loop)
    if not control and by_value is None:
        raise Failed("no field is finite control (each update reads the element or a parameter)")
    if by_value is not None and len(by_value) <= MAX_CELLS:
        # the element takes finitely many values: each value its own cell
        atoms = ()
        cells = [{n: const(v, d.type) for d in loop.elements for n, v in [(d.name, val[d.name])]}
                 for val in by_value]
        outputs_c = outputs
        control = [i for i, e in enumerate(outputs) if not (free_vars([e]) & params)]
    else:
        if len(atoms) > MAX_PREDICATES:
            raise Failed(f"the element enters through {len(atoms)} predicates (at most {MAX_PREDICATES})")
        vectors = atom_cells(loop, atoms)
        cells = [{f"cell.{i}": const(b, a.type) for i, (a, b) in enumerate(zip(atoms, v))} for v in vectors]
        atoms = tuple(atoms)
    if not cells:
        raise Failed("no element satisfies the preconditions")
    if len(cells) > MAX_CELLS:
        raise Failed(f"{len(cells)} cells of the element (at most {MAX_CELLS})")
    control = _closed([i for i in control if i not in as_data], outputs_c, names)
    if not control:
        raise Failed("no field is finite control (each update reads the element or a parameter)")
    init = [e.arg for e in initial_state(loop)]
    unbounded_fields = _unbounded(loop)
    while True:
        # fields without bounds by interval reasoning leave first, where the rest of the
        # control is closed without them (the reasoning ignores guards: a streak reset at
        # 4 has no bound there, and with it gone the level, which reads it, goes too)
        unbounded = unbounded_fields & set(control)
        if unbounded and not _closed([i for i in control if i not in unbounded], outputs_c, names):
            unbounded = frozenset()
        got = _explore(loop, control, outputs_c, cells, init, deadline, limit=most, unbounded=unbounded)
        if isinstance(got, tuple):
            break
        # too many states: the fields with the most values are data, not control
        control = _closed([i for i in control if i not in got], outputs_c, names)
        if not control:
            raise Failed(f"more than {most} reachable states: no finite control part")
    states, table = got
    data = tuple(i for i in range(len(fields)) if i not in control)
    for i in data:
        if fields[i].type not in (Type.INT, Type.REAL):
            raise Failed(f"field {fields[i].name} is neither finite control nor a number")
    monoid = _monoid(table, len(states), deadline, functions)
    return Machine(loop, tuple(control), data, tuple(atoms), tuple(cells), tuple(states), table, monoid)


def _closed(control: list[int], outputs, names: dict) -> list[int]:
    """The largest part of `control` whose updates read only fields in it."""
    control = list(control)
    changed = True
    while changed:
        changed = False
        for i in list(control):
            reads = {names[n] for n in free_vars([outputs[i]]) if n in names}
            if not reads <= set(control):
                control.remove(i)
                changed = True
    return control


def _replace_atoms(outputs, atoms, names):
    """`outputs` with each atom (by its text) replaced by the Bool variable of its cell."""
    keys = {repr(a): var(n, a.type) for a, n in zip(atoms, names)}

    def rule(e, go):
        return keys.get(repr(e)) if e.type in (Type.BOOL, Type.INT) and _state_free(e) and repr(e) in keys else None
    return transform(outputs, rule)


def _unbounded(loop: Loop) -> frozenset[int]:
    """The numeric fields that interval reasoning over the step leaves without a lower or
    an upper bound (`thm3.analysis.intervals`): a count of runs beside capped run lengths."""
    from thm3.analysis.intervals import field_ranges
    try:
        ranges = field_ranges(loop)
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return frozenset()
    return frozenset(i for i, f in enumerate(loop.fields)
                     if f.name in ranges and (not ranges[f.name].lo or not ranges[f.name].hi))


def _grown(loop: Loop, control: list[int], states: list, unbounded: frozenset) -> set[int]:
    """The control fields to read as data once the states pass the bound: among those
    without a bound by interval reasoning where there are any (else among all), the ones
    that took values no constant of the loop names first (a count's 4, 5, 6 beside a
    mode's 0 .. 3), then the counts, then those with the most values."""
    values = {j: {s[k] for s in states} for k, j in enumerate(control)}
    fields = loop.fields
    pool = [j for j in control if j in unbounded] or list(control)
    named = _constants(loop)
    grown = {j: len(values[j] - named) if fields[j].type is not Type.BOOL else 0 for j in pool}
    if max(grown.values()) > 0:
        return {j for j in pool if grown[j] == max(grown.values())}
    if len(pool) < len(control):
        return set(pool)
    counts = set(control) & set(_self_counts(loop))     # (acc.n + 1: data-like)
    if counts and counts != set(control):
        return counts
    top = max(len(v) for v in values.values())
    return {j for j in control if len(values[j]) == top and fields[j].type is not Type.BOOL} or set(control)


def _explore(loop, control, outputs, cells, init, deadline, starts=(), limit=MAX_STATES, unbounded=frozenset()):
    """Breadth-first search of the control states from the initial one (and `starts`):
    (states, table), or the fields to read as data once the states pass `limit`
    (`_grown`, among `unbounded` where it is given)."""
    fields = loop.fields
    start = tuple(init[i] for i in control)
    states = [start] + [s for s in starts if s != start]
    index = {s: n for n, s in enumerate(states)}
    rows: list[list[int]] = [[] for _ in cells]
    outs = [outputs[i] for i in control]
    steps = [compiled(tuple(simplify(e) for e in substitute(outs, cell)), PYTHON) for cell in cells]
    i = 0
    while i < len(states):
        if time.monotonic() > deadline:
            raise Failed("time ran out exploring the states")
        env = {f"acc.{fields[j].name}": v for j, v in zip(control, states[i])}
        for c, run in enumerate(steps):
            vals = run(env)
            nxt = tuple(_plain(v, fields[j].type) for j, v in zip(control, vals))
            if nxt not in index:
                if len(states) >= limit:
                    return _grown(loop, control, states, unbounded)
                index[nxt] = len(states)
                states.append(nxt)
            rows[c].append(index[nxt])
        i += 1
    return tuple(states), tuple(tuple(r) for r in rows)


def _constants(loop: Loop) -> set:
    """The numbers the step and the initial state name."""
    out = {e.arg for e in walk(list(loop.left.outputs)) if e.op is Op.CONST and not isinstance(e.arg, bool)}
    return out | {e.arg for e in initial_state(loop) if not isinstance(e.arg, bool)}


def _plain(v, type_: Type):
    v = np.asarray(v).item() if not isinstance(v, (bool, int, float)) else v
    if type_ is Type.BOOL:
        return bool(v)
    if type_ is Type.INT:
        return int(v)
    return float(v)


def _monoid(table, n: int, deadline: float, most: int = MAX_MONOID) -> dict:
    """The transition functions of nonempty lists, breadth first from the cells'; `Failed`
    past `most` of them."""
    found: dict[tuple, tuple] = {}
    frontier = []
    for c, row in enumerate(table):
        if row not in found:
            found[row] = (c,)
            frontier.append(row)
    while frontier:
        nxt = []
        if time.monotonic() > deadline:
            raise Failed("time ran out composing transition functions")
        for f in frontier:
            for c, row in enumerate(table):
                g = tuple(row[j] for j in f)      # f first, then the cell
                if g not in found:
                    if len(found) >= most:
                        raise Failed(f"more than {most} transition functions")
                    found[g] = found[f] + (c,)
                    nxt.append(g)
        frontier = nxt
    return found


# --- synthesis -----------------------------------------------------------------------

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
        bounded = set(narrow.data) - _unbounded(loop)
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
                     f"{show_state(m, m.states[_first_diff(f, g)])}: a lift is needed")
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
        outs[i] = _tree(table_m, rows, values, a, b, fields[i].type, deadline)
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
    """The data fields of the combine: over (+, *) by `_data_combine`; where some are over
    (max, +) or (min, +) (`thm3.synth.tropical`), each semiring's fields apart."""
    from thm3.synth import tropical
    if "groups" not in memo:
        memo["groups"] = tropical.groups(m)
    groups = memo["groups"]
    if groups is None:
        return _data_combine(m, by_state, a, b, deadline, extra=extra, memo=memo)
    out = {}
    for s, idx in groups.items():
        sub, sub_memo = tropical.restricted(m, idx), memo.setdefault(s.name, {})
        if s.plus is Op.ADD:
            out.update(_data_combine(sub, by_state, a, b, deadline, extra=extra, memo=sub_memo))
        else:
            out.update(tropical.combine(s, sub, by_state, a, b, deadline, extra=extra, memo=sub_memo, whole=m))
    return out


def _plus(form: Expr, own: Expr, terms: list) -> Expr:
    """form + own, as one linear form over `terms` where `form` is one (-own + 3 gives 3)."""
    lin = affine_form(form, {t.arg: n for n, t in enumerate(terms)})
    rest = None if lin is None else lin.get("")
    if lin is None or MODULUS in lin or any(symbolic(c) for k, c in lin.items() if k != "") or (
            rest is not None and rest.op is not Op.CONST):
        return simplify(_add(form, own))
    coefs = [float(lin.get(n, 0.0)) + (1.0 if t.arg == own.arg else 0.0) for n, t in enumerate(terms)]
    return _linear_expr(coefs + [float(rest.arg) if rest is not None else 0.0], list(terms), own.type)


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
    outputs = list(_replace_atoms(list(loop.left.outputs), m.atoms, [f"cell.{i}" for i in range(len(m.atoms))])) \
        if m.atoms else list(loop.left.outputs)
    box = list(itertools.product(*values))
    got = _explore(loop, list(m.control), outputs, list(m.cells), init, deadline, starts=box, limit=len(box) + 1)
    if not isinstance(got, tuple) or len(got[0]) != len(box):
        return None
    states, table = got
    try:
        monoid = _monoid(table, len(states), deadline)
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


def show_state(m: Machine, s: tuple) -> str:
    return "(" + ", ".join(f"{n}={v}" for n, v in zip(m.names(m.control), s)) + ")"


def _first_diff(f, g) -> int:
    return next(i for i, (x, y) in enumerate(zip(f, g)) if x != y)


def _tree(m: Machine, rows, values: dict, a: dict, b: dict, type_: Type, deadline: float | None = None) -> Expr:
    """A `where` chain over a's and b's control fields whose value on each row (a's
    state q, b's state r) is `values[(q, r)]`: split on one field at a time, with
    leaves that are constants or one of the fields (or its negation).  Both orders of
    the operands are tried; the smaller tree is kept."""
    ctrl = list(m.control)
    best = None
    for order in (("b", "a"), ("a", "b")):
        keys = [(side, k) for side in order for k in range(len(ctrl))]
        t = _split(m, rows, values, keys, a, b, type_, deadline)
        if best is None or _size(t) < _size(best):
            best = t
    return best


def _size(e: Expr) -> int:
    return len(walk([e]))


def _lookup(m: Machine, row, key):
    side, k = key
    q, r = row
    return m.states[q if side == "a" else r][k]


def _split(m: Machine, rows, values, keys, a, b, type_, deadline: float | None = None) -> Expr:
    """The tree of `_tree` over `rows` (pairs (q, r) of state indices), split on `keys`,
    read off NumPy arrays of the rows' fields and values (a table of 111 states against
    111 is 12,321 rows)."""
    states = np.array([[float(v) for v in st] for st in m.states])
    q = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    r = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
    v = np.array([float(values[row]) for row in rows])
    return _split_at(m, _Table(rows, values, states, q, r, v, {}), np.arange(len(rows)), keys, a, b, type_,
                     deadline)


@dataclass(frozen=True)
class _Table:
    rows: list          # (q, r) pairs
    values: dict        # (q, r) -> the value to table
    states: np.ndarray  # the control states' fields, as floats
    q: np.ndarray       # a's state index, a row
    r: np.ndarray       # b's state index, a row
    v: np.ndarray       # the value, a row, as a float
    memo: dict          # `simplify`'s, shared by the tree's `_where`s: each branch is simplified once

    def column(self, key, idx: np.ndarray) -> np.ndarray:
        side, k = key
        return self.states[(self.q if side == "a" else self.r)[idx], k]


def _split_at(m: Machine, t: _Table, idx: np.ndarray, keys, a, b, type_, deadline) -> Expr:
    if deadline is not None and time.monotonic() > deadline:
        raise Failed("time ran out tabling the combine")
    v = t.v[idx]
    if np.all(v == v[0]):
        return const(_plain(t.values[t.rows[idx[0]]], type_), type_)
    fields = m.loop.fields
    for key in keys:
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        if ref.type is not type_:
            continue
        col = t.column(key, idx)
        if np.all(col == v):
            return ref
        if type_ is Type.BOOL and np.all(col != v):
            return Expr(Op.NOT, Type.BOOL, (ref,))
    for n, key in _gains(m, t, idx, keys, type_):
        col = t.column(key, idx)
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        rest = keys[:n] + keys[n + 1:]
        if ref.type is Type.BOOL:
            return _where(ref, _split_at(m, t, idx[col != 0], rest, a, b, type_, deadline),
                          _split_at(m, t, idx[col == 0], rest, a, b, type_, deadline), t.memo)
        seen = np.unique(col)
        plain = [_plain(int(x) if fields[m.control[key[1]]].type is Type.INT else float(x), ref.type) for x in seen]
        out = _split_at(m, t, idx[col == seen[-1]], rest, a, b, type_, deadline)
        for x, p in zip(reversed(seen[:-1]), reversed(plain[:-1])):
            test = Expr(Op.EQ, Type.BOOL, (ref, const(p, ref.type)))
            out = _where(test, _split_at(m, t, idx[col == x], rest, a, b, type_, deadline), out, t.memo)
        return out
    raise Failed("the table is not a function of the control fields")


def _gains(m: Machine, t: _Table, idx: np.ndarray, keys, type_):
    """`_by_gain` on the rows `idx` of the table `t`."""
    codes, val = np.unique(t.v[idx], return_inverse=True)
    cols = {key: t.column(key, idx) for key in keys}
    return _scored(m, cols, val, len(codes), t.v[idx], keys, type_)


def _by_gain(m: Machine, rows, values, keys, a, b, type_):
    """The keys to split on, best first: the split whose parts are most often a leaf
    (a constant or a field), then the fewest distinct values left in the parts.  Scored
    with NumPy over the rows (a table of 111 states against 111 has 12,321 rows, and
    every key is scored at every node of the tree)."""
    states = np.array([[float(v) for v in st] for st in m.states])
    q = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    r_ = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    codes: dict = {}
    val = np.fromiter((codes.setdefault(values[row], len(codes)) for row in rows), dtype=np.int64, count=len(rows))
    numeric = all(isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)) for v in codes)
    rawf = np.array([float(values[row]) for row in rows]) if numeric else None
    cols = {key: states[q if key[0] == "a" else r_, key[1]] for key in keys}
    return _scored(m, cols, val, max(len(codes), 1), rawf, keys, type_)


def _scored(m: Machine, cols: dict, val: np.ndarray, nv: int, rawf: np.ndarray | None, keys, type_):
    """The keys by the score `_by_gain` gives, from each key's column over the rows, the
    rows' value codes `val` (of `nv`) and their values as floats (None where they are
    not numbers: no field is then a leaf)."""
    fields = m.loop.fields
    scored = []
    for n, key in enumerate(keys):
        parts, inv = np.unique(cols[key], return_inverse=True)
        if len(parts) < 2:
            continue
        pairs = np.unique(inv * nv + val)
        nvals = np.bincount(pairs // nv, minlength=len(parts))
        open_ = nvals > 1
        if rawf is not None and open_.any():
            for other in keys[:n] + keys[n + 1:]:
                if fields[m.control[other[1]]].type is not type_:
                    continue
                col = cols[other]
                leaf = np.bincount(inv, weights=(col != rawf), minlength=len(parts)) == 0
                if type_ is Type.BOOL:
                    leaf |= np.bincount(inv, weights=(col == rawf), minlength=len(parts)) == 0
                open_ &= ~leaf
                if not open_.any():
                    break
        scored.append(((int(open_.sum()), int(nvals[open_].sum()), n), n, key))
    scored.sort(key=lambda t: t[0])
    return [(n, key) for _, n, key in scored]


def _where(c: Expr, x: Expr, y: Expr, memo: dict | None = None) -> Expr:
    """where(c, x, y), simplified (`memo`: shared by the calls that build one tree, whose
    branches are earlier calls' results, so each subterm is simplified once)."""
    return simplify(Expr(Op.WHERE, x.type if x.type is y.type else Type.REAL, (c, x, y)), memo=memo)


# --- finite control with linear data --------------------------------------------------

def affine_rows(m: Machine) -> dict:
    """Per (control state, cell): each data field's update as {data field index ->
    coefficient, "": the rest}, a coefficient a float or a data-free expression
    (`symbolic`); `Failed` where it is not affine in the data."""
    data_names = {f"acc.{m.loop.fields[i].name}": i for i in m.data}
    out = {}
    for key, exprs in data_steps(m).items():
        rows = []
        for e in exprs:
            lin = affine_form(e, data_names)
            if lin is None:
                raise Failed(f"recognised control ({', '.join(m.names(m.control))}); the update "
                             f"{e!r} is not affine in ({', '.join(m.names(m.data))})")
            rows.append(lin)
        out[key] = rows
    return out


def data_steps(m: Machine) -> dict:
    """Per (control state, cell): the data fields' updates with the control fields and the
    element's atoms replaced by their values there, simplified."""
    loop = m.loop
    fields = loop.fields
    outputs = list(_replace_atoms(list(loop.left.outputs), m.atoms,
                                  [f"cell.{i}" for i in range(len(m.atoms))])) if m.atoms else list(loop.left.outputs)
    out = {}
    for q, s in enumerate(m.states):
        env = {f"acc.{fields[j].name}": const(v, fields[j].type) for j, v in zip(m.control, s)}
        for c, cell in enumerate(m.cells):
            out[(q, c)] = [simplify(e) for e in substitute([outputs[i] for i in m.data], env | cell)]
    return out


def affine_form(e: Expr, names: dict) -> dict | None:
    """`e` as sum of coefficient * data field plus a data-free rest: {index: coefficient,
    "": rest expression or None}.  A coefficient is a float, or a data-free expression (a
    parameter, the element: `lam * s`), which `symbolic` tells apart.  An Int update
    reduced mod a constant m at the top (`(3 * h + x) % 251`) carries MODULUS: m."""
    if not (free_vars([e]) & set(names)):
        return {"": e}
    match e.op:
        case Op.VAR:
            return {names[e.arg]: 1.0, "": None}
        case Op.ADD | Op.SUB:
            x, y = (affine_form(s, names) for s in e.src)
            if x is None or y is None or MODULUS in x or MODULUS in y:
                return None
            sign = 1.0 if e.op is Op.ADD else -1.0
            out = {k: v for k, v in x.items() if k != ""}
            for k, v in y.items():
                if k != "":
                    out[k] = _coef_add(out.get(k, 0.0), _coef_scale(sign, v))
            rest = [r for r in (x[""], y[""]) if r is not None]
            if len(rest) == 2:
                out[""] = Expr(e.op, e.type, tuple(rest))
            elif y[""] is not None and e.op is Op.SUB:
                out[""] = Expr(Op.NEG, y[""].type, (y[""],))
            else:
                out[""] = rest[0] if rest else None
            return out
        case Op.NEG:
            x = affine_form(e.src[0], names)
            if x is None or MODULUS in x:
                return None
            out = {k: _coef_scale(-1.0, v) for k, v in x.items() if k != ""}
            out[""] = None if x[""] is None else Expr(Op.NEG, x[""].type, (x[""],))
            return out
        case Op.MOD if e.type is Type.INT and isinstance(e.arg, int) and e.arg > 1:
            # an Int update reduced mod m: the affine form, read modulo m (`MODULUS`)
            x = affine_form(_unreduced(e.src[0], e.arg), names)
            if x is None or MODULUS in x:
                return None
            return x | {MODULUS: e.arg}
        case Op.MUL:
            for s, t in (e.src, e.src[::-1]):
                if not (free_vars([t]) & set(names)) and not (t.op is Op.CONST and isinstance(t.arg, bool)):
                    x = affine_form(s, names)
                    if x is None or MODULUS in x:
                        return None
                    k = float(t.arg) if t.op is Op.CONST else t
                    out = {j: _coef_mul(k, v) for j, v in x.items() if j != ""}
                    out[""] = None if x[""] is None else Expr(Op.MUL, e.type, (x[""], t))
                    return out
            return None
        case _:
            return None


MODULUS = "%"       # the key of an `affine_form` form read modulo m


def _unreduced(e: Expr, mod: int) -> Expr:
    """`e` with its inner `% mod` dropped through +, -, * (x mod m is a ring map: the
    outer `% mod` gives the same remainder): (s2 + (s1 + x) % m) % m reads s2 + s1 + x."""
    if e.op is Op.MOD and e.arg == mod:
        return _unreduced(e.src[0], mod)
    if e.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL) and e.type is Type.INT:
        src = tuple(_unreduced(s, mod) for s in e.src)
        return e if src == e.src else Expr(e.op, e.type, src, e.arg)
    return e


def symbolic(c) -> bool:
    """Whether an `affine_form` coefficient is an expression (a parameter, the element), not a float."""
    return isinstance(c, Expr)


def _coef_expr(c, type_: Type = Type.REAL) -> Expr:
    return c if symbolic(c) else const(int(c) if type_ is Type.INT and float(c).is_integer() else c, type_)


def _coef_type(*cs) -> Type:
    ints = all(c.type is Type.INT if symbolic(c) else float(c).is_integer() for c in cs)
    return Type.INT if ints else Type.REAL


def _coef_add(u, v):
    if not symbolic(u) and not symbolic(v):
        return u + v
    if not symbolic(u) and u == 0.0:
        return v
    if not symbolic(v) and v == 0.0:
        return u
    t = _coef_type(u, v)
    return Expr(Op.ADD, t, (_coef_expr(u, t), _coef_expr(v, t)))


def _coef_scale(k: float, v):
    if not symbolic(v):
        return k * v
    if k == 1.0:
        return v
    if k == -1.0:
        return Expr(Op.NEG, v.type, (v,))
    return Expr(Op.MUL, Type.REAL, (const(k), v)) if v.type is Type.REAL or not float(k).is_integer() else \
        Expr(Op.MUL, v.type, (const(int(k), v.type), v))


def _coef_mul(k, v):
    if not symbolic(k):
        return _coef_scale(k, v)
    if not symbolic(v):
        return _coef_scale(v, k)
    t = Type.INT if k.type is Type.INT and v.type is Type.INT else Type.REAL
    return Expr(Op.MUL, t, (k, v))


def _data_combine(m: Machine, by_state: dict, a: dict, b: dict, deadline: float, extra=(),
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
        memo["coef"] = coefficient_products(m, _step_matrices(m, rows)) if memo["determined"] else None
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
            starts = [_start_state(m, qq, u) for qq, u in keys]
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
                    lin = _linear_expr([float(x) for x in arow] + [0.0], [a[j] for j in m.data], fields[i].type)
                else:
                    lin = None
                    for jj, j in enumerate(m.data):
                        s = slopes[(r, q, k)][jj]
                        if s.op is Op.CONST and float(s.arg) == 0.0:
                            continue
                        term = a[j] if s.op is Op.CONST and float(s.arg) == 1.0 else _mul(s, a[j])
                        lin = term if lin is None else _add(lin, term)
                    lin = lin if lin is not None else const(0 if fields[i].type is Type.INT else 0.0, fields[i].type)
                leaves[(q, r)] = _add(lin, per_state[r][q])
                if modulus[k]:
                    leaves[(q, r)] = Expr(Op.MOD, Type.INT, (leaves[(q, r)],), modulus[k])
        out[i] = expr_tree(m, list(leaves), leaves, a, b, deadline)
    return out


def sampled_ends(m: Machine, by_state: dict, extra=()) -> list[tuple]:
    """Sampled lists folded from init: (xs, params, the data fields' values and 1, the
    control state the list ends in), each state of `by_state` reached by MIN_PER_END
    lists at least where steering reaches it."""
    from thm3.semantics.samples import Domain
    loop = m.loop
    fields = loop.fields
    rng = np.random.default_rng(0)
    dom = Domain(loop)
    samples = []
    # lists long enough that each end state is reached by words of several lengths: a
    # phase counter mod k reaches a state by one short word only below k + its index,
    # where what b adds from another state may be 0 on every sample (and then fit as 0)
    longest = min(16, max(6, 2 * len(m.states) + 2))
    for i in range(48 if longest == 6 else 96):
        params = dom.params(rng, small=True)
        n = int(rng.integers(0, longest))
        xs = dom.random_list(rng, params, n, small=i % 2 == 0)
        samples.append((xs, params))
    # each sampled list folded once from init: b's fields, and the control state it ends in
    # (random lists, then walks over the control's moves, folded together)
    lists = samples + walked_lists(m, dom, rng, 32, longest) + list(extra)
    folded = []
    for (xs, params), whole in zip(lists, fold_batched(loop, lists)):
        r_state = tuple(_plain(whole[j], fields[j].type) for j in m.control)
        if r_state in m.states:
            folded.append((xs, params, [float(whole[j]) for j in m.data] + [1.0], m.states.index(r_state)))
    reached: dict[int, int] = {}
    for *_, r in folded:
        reached[r] = reached.get(r, 0) + 1
    if any(reached.get(r, 0) < MIN_PER_END for r in by_state):
        # random lists miss a state that only a few words reach, or reach it by too few
        # lists for b's data to vary there (a count of runs of five that every list ending
        # in a state had at 0): lists steered to it, past random walks twice as long
        # (fewer a target where there are many: 24 lists for each of 88 states made the
        # fits' Python loops the half of the synthesis of a 4-mode lexer's lift)
        steered = _steered_lists(m, dom, rng, [r for r in by_state], 2 * longest,
                                 per_target=6 if len(by_state) <= 24 else 3)
        for (xs, params, r), whole in zip(steered, fold_batched(loop, [(xs, p) for xs, p, _ in steered])):
            folded.append((xs, params, [float(whole[j]) for j in m.data] + [1.0], r))
    return folded


def _same_coefficients(x, y) -> bool:
    """Coefficient matrices equal up to rounding (NumPy's default tolerance, 1e-5, took a
    decay of 0.99999 a step for the identity: every word's coefficient then looked fixed)."""
    return bool(np.allclose(x, y, rtol=1e-12, atol=1e-12))


def coefficients_determined(m: Machine, rows: dict | None = None) -> bool:
    """Whether the data's coefficients from each control state are a function of the
    list's transition function (equal for every word of it: a count reset by the control),
    checked on the cells' generators; else they are the lift's slopes, read off b's data.
    A coefficient that is an expression (a parameter, the element) is taken as no such
    function: its products are slopes."""
    rows = affine_rows(m) if rows is None else rows
    if any(symbolic(c) for row in rows.values() for lin in row for k, c in lin.items() if k not in ("", MODULUS)):
        return False
    if any(moduli(m, rows).values()):
        return False                # products mod m: slopes, read modulo m
    step_matrix = _step_matrices(m, rows)
    return composes(m, step_matrix, coefficient_products(m, step_matrix), np.eye(len(m.data)), _matmul)


def _matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Matrix products over the last two axes, (+, *)."""
    return np.einsum("...ij,...jk->...ik", x, y)


def composes(m: Machine, step_matrix, coef: dict, eye: np.ndarray, product) -> bool:
    """Whether the coefficient matrices `coef` (of `coefficient_products`) are a function of the
    transition function: the product (`product`, over the semiring) of the step's matrix
    after each function's is the matrix of the function the step leads to."""
    # the empty list too: its function is the identity with the identity's coefficients, so
    # a nonempty list with the identity function (four steps of a phase mod 4) must have
    # them (a buffer flushed on the way has not), and one cell from it is that cell's step
    # (with the identity among the monoid's functions, the loop below checks each cell from it)
    if m.identity in coef:
        if not _same_coefficients(coef[m.identity], eye):
            return False
    elif any(tuple(row) not in coef or not _same_coefficients(step_matrix(q, c), coef[tuple(row)][q])
             for c, row in enumerate(m.table) for q in range(len(m.states))):
        return False
    # every function f and cell c at once: step(f(q), c) @ coef[f][q] == coef[f then c][q]
    funcs = list(m.monoid)
    index = {f: n for n, f in enumerate(funcs)}
    fa = np.array(funcs, dtype=np.int64)                            # (F, Q)
    mats = np.array([coef[f] for f in funcs])                        # (F, Q, d, d)
    steps = np.array([[step_matrix(q, c) for c in range(len(m.cells))] for q in range(len(m.states))])
    for c, row in enumerate(m.table):
        rowa = np.array(row, dtype=np.int64)
        then = [index.get(tuple(rowa[f])) for f in fa]
        if any(g is None for g in then):
            return False
        lhs = product(steps[fa, c], mats)
        if not _same_coefficients(lhs, mats[np.array(then)]):
            return False
    return True


def moduli(m: Machine, rows: dict) -> dict[int, int | None]:
    """Per data field (its place in `m.data`): the m its updates are reduced modulo, or
    None.  A field reduced in some steps must, in the others, be kept (its update the
    field itself) or set to a remainder: else `Failed`.  The data then stays a remainder
    from a remainder start, and the combine's leaves are reduced mod m too."""
    fields = m.loop.fields
    out: dict[int, int | None] = {}
    for k, i in enumerate(m.data):
        lins = [row[k] for row in rows.values()]
        ms = {lin[MODULUS] for lin in lins if MODULUS in lin}
        if not ms:
            out[k] = None
            continue
        if len(ms) > 1:
            raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} is reduced "
                         f"modulo {sorted(ms)}: one modulus a field")
        (mod,) = ms
        for lin in lins:
            if MODULUS in lin:
                continue
            others = [v for j, v in lin.items() if j not in ("", i)]
            zero = all(not symbolic(v) and v == 0.0 for v in others)
            own, rest = lin.get(i), lin[""]
            kept = zero and not symbolic(own) and own == 1.0 and rest is None
            remainder = zero and own is None and rest is not None and rest.op is Op.CONST and 0 <= rest.arg < mod
            if not (kept or remainder):
                raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} is reduced "
                             f"modulo {mod} in some steps but not kept or set to a remainder in the others")
        start = initial_state(m.loop)[i].arg
        if not 0 <= start < mod:
            raise Failed(f"recognised control ({', '.join(m.names(m.control))}); {fields[i].name} starts at "
                         f"{start}, not a remainder mod {mod}")
        out[k] = mod
    return out


def _step_matrices(m: Machine, rows: dict):
    """(control state, cell) -> the data's coefficient matrix of one step."""
    nd = len(m.data)
    built: dict[tuple, np.ndarray] = {}

    def step_matrix(q, c):
        if (q, c) not in built:         # one a (state, cell): every word's product reads them
            built[(q, c)] = np.array([[rows[(q, c)][r].get(m.data[j], 0.0) for j in range(nd)] for r in range(nd)])
        return built[(q, c)]
    return step_matrix


def coefficient_products(m: Machine, step_matrix, product=None, unit: np.ndarray | None = None) -> dict:
    """Each transition function's product of the data's coefficient matrices along a
    shortest word of it, from each control state (breadth first: a word is its parent's
    with one cell more); over (+, *) unless `product` and its `unit` matrix say otherwise."""
    product = _matmul if product is None else product
    nq = len(m.states)
    steps = np.array([[step_matrix(q, c) for c in range(len(m.cells))] for q in range(nq)])
    eye = np.broadcast_to(np.eye(len(m.data)) if unit is None else unit, (nq, len(m.data), len(m.data)))
    by_word = {(): (np.arange(nq), eye)}       # word -> (states it leads each q to, products)
    coef: dict[tuple, tuple] = {}
    for f, word in sorted(m.monoid.items(), key=lambda kv: len(kv[1])):
        s, mat = by_word[word[:-1]]     # (`_monoid` writes each word as a shorter one's plus a cell)
        c = word[-1]
        out = product(steps[s, c], mat)
        by_word[word] = (np.array(m.table[c])[s], out)
        coef[f] = tuple(out)
    return coef


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
            return _linear_expr([float(x) for x in sol], terms, type_)
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
    return _linear_expr([float(x) for x in sol], terms, type_)


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
                out = _where(Expr(Op.EQ, Type.BOOL, (residue, const(c, Type.INT))), forms[c], out)
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
                    return _linear_expr([float(x) for x in sol], terms, type_)
    if primes is not None:
        got = solve_mod(mat, rhs, primes)
        if got is not None:
            half = modulus // 2
            return _linear_expr([float(c - modulus if c > half else c) for c in got], terms, type_)
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


def _start_state(m: Machine, q: int, unit: int | None = None) -> tuple:
    """The state at control state q with the data 0 (data field `unit` 1), for `fold_left`."""
    fields = m.loop.fields
    start = [e.arg for e in initial_state(m.loop)]
    for j, v in zip(m.control, m.states[q]):
        start[j] = v
    for j in m.data:
        start[j] = (1 if j == unit else 0) if fields[j].type is Type.INT else (1.0 if j == unit else 0.0)
    return tuple(np.asarray(v) for v in start)


def _move_settings(m: Machine, dom, rng, settings: int):
    """(params, moves, their keys) for `settings` parameter settings with moves (`_moves`)."""
    cells = _cells_or_none(m)
    for _ in range(settings):
        params = dom.params(rng, small=True)
        moves = _moves(m, dom, rng, params, cells)
        if moves:
            yield params, moves, list(moves)


def _moves(m: Machine, dom, rng, params: dict, cells, pool_size: int = 32) -> dict[tuple, list]:
    """The moves a pool of elements makes on the control: (the state each reachable state
    goes to) -> the elements that make it.  The pool is random elements and one element
    of each cell (`cell_elements`, where it has them), so that a cell random draws rarely
    hit (x == 92) has its move (`cells`, from `_cells_or_none`); each element sorted by a
    one-step fold from each state."""
    from thm3.semantics.samples import fold_left
    loop = m.loop
    fields = loop.fields
    index = {st: i for i, st in enumerate(m.states)}
    n = len(m.states)
    starts = [_start_state(m, q) for q in range(n)]
    # every start state at once, as NumPy lanes: one step a pool element
    batch = tuple(np.array([st[f] for st in starts]) for f in range(len(fields)))
    pool = dom.random_list(rng, params, pool_size, small=bool(rng.integers(0, 2)))
    if cells:
        pool += [tuple(0 if d.index else v for d, v in zip(loop.elements, e)) for e in cells
                 if dom.precondition_holds(e, params)]
    moves: dict[tuple, list] = {}
    for e in pool:
        end = fold_left(loop, [e], params, state=batch, dim=1)
        lanes = [np.broadcast_to(np.asarray(end[j]), (n,)) for j in m.control]
        act = []
        for q in range(n):
            got = index.get(tuple(_plain(lane[q], fields[j].type) for j, lane in zip(m.control, lanes)))
            if got is None:
                break
            act.append(got)
        else:
            moves.setdefault(tuple(act), []).append(e)
    return moves


def _cells_or_none(m: Machine):
    """`cell_elements`, or None where Z3 cannot model a cell (random elements only then)."""
    try:
        return cell_elements(m)
    except Exception:           # noqa: BLE001 -- a Z3 failure: the pool stays random
        return None


def _walk(loop: Loop, moves: dict, rng, acts: list, prefix_len: int, tail=()) -> list:
    """A list that makes `prefix_len` random moves (each move equally likely, so rare cells
    appear) and then the moves of `tail`, each element drawn from its move's pool."""
    chosen = [acts[int(rng.integers(0, len(acts)))] for _ in range(prefix_len)] + list(tail)
    pick = [moves[a][int(rng.integers(0, len(moves[a])))] for a in chosen]
    return [tuple(k if d.index else v for d, v in zip(loop.elements, e)) for k, e in enumerate(pick)]


def _steered_lists(m: Machine, dom, rng, targets: list[int], longest: int, settings: int = 4,
                   per_target: int = 6) -> list[tuple[list, dict, int]]:
    """(xs, params, r): for each target control state r, lists that end in it, a random
    walk over the control's moves (`_moves`) and then a shortest path to r, the elements
    drawn from the moves' pools, so the data vary."""
    from collections import deque
    out = []
    for params, moves, acts in _move_settings(m, dom, rng, settings):
        paths: dict[int, dict[int, list]] = {}

        def path(q: int, r: int):
            if q not in paths:          # breadth first from q: a shortest path to each state
                seen, todo = {q: []}, deque([q])
                while todo:
                    u = todo.popleft()
                    for a in acts:
                        v = a[u]
                        if v not in seen:
                            seen[v] = seen[u] + [a]
                            todo.append(v)
                paths[q] = seen
            return paths[q].get(r)
        for r in targets:
            for _ in range(per_target):
                n = int(rng.integers(0, longest))
                prefix = [acts[int(rng.integers(0, len(acts)))] for _ in range(n)]
                q = 0
                for a in prefix:
                    q = a[q]
                tail = path(q, r)
                if tail is None:
                    # r is not reachable past the prefix (copies of a lift that merge never
                    # part again): a shortest path from the initial state, the data varied
                    prefix, tail = [], path(0, r)
                if tail is not None:
                    out.append((_walk(m.loop, moves, rng, acts, 0, prefix + tail), params, r))
    return out


def walked_lists(m: Machine, dom, rng, count: int, longest: int, settings: int = 4) -> list[tuple[list, dict]]:
    """(xs, params): random walks over the control's moves (`_moves`), of random lengths
    below `longest`: every cell of the element in use, however rarely random draws hit it."""
    out = []
    for params, moves, acts in _move_settings(m, dom, rng, settings):
        for _ in range(count // settings):
            out.append((_walk(m.loop, moves, rng, acts, int(rng.integers(0, longest))), params))
    return out


def _fit_or_none(m: Machine, pts: list, terms: list, type_: Type, what: str, modulus: int | None = None,
                 bases=()) -> Expr | None:
    try:
        return _fit_linear(m, pts, terms, type_, what, modulus, bases=bases)
    except Failed:
        return None


def _mul(x: Expr, y: Expr) -> Expr:
    t = Type.INT if x.type is Type.INT and y.type is Type.INT else Type.REAL
    return Expr(Op.MUL, t, (x, y))


def _linear_expr(coefs, terms, type_: Type) -> Expr:
    out = None
    for cf, t in zip(coefs, terms + [None]):
        if abs(cf) < 1e-12:
            continue
        c = int(cf) if float(cf).is_integer() else cf
        if t is None:
            piece = const(c if type_ is Type.INT and isinstance(c, int) else float(c), type_ if isinstance(c, int) else Type.REAL)
        elif c == 1:
            piece = t
        elif c == -1:
            piece = Expr(Op.NEG, t.type, (t,))
        else:
            piece = Expr(Op.MUL, t.type if isinstance(c, int) else Type.REAL, (const(c), t))
        out = piece if out is None else _add(out, piece)
    return out if out is not None else const(0 if type_ is Type.INT else 0.0, type_)


def _add(x: Expr, y: Expr) -> Expr:
    if y.op is Op.CONST and not isinstance(y.arg, bool) and float(y.arg) == 0.0:
        return x
    if x.op is Op.CONST and not isinstance(x.arg, bool) and float(x.arg) == 0.0:
        return y
    if y.op is Op.NEG:
        return Expr(Op.SUB, x.type if x.type is y.type else Type.REAL, (x, y.src[0]))
    return Expr(Op.ADD, x.type if x.type is y.type else Type.REAL, (x, y))


def _split_offset(e: Expr) -> tuple[Expr | None, object]:
    """`e` as (the rest, a constant added to it): (None, c) for a constant."""
    if e.op is Op.CONST and not isinstance(e.arg, bool):
        return None, e.arg
    if e.op is Op.ADD:
        x, y = e.src
        if y.op is Op.CONST and not isinstance(y.arg, bool):
            return x, y.arg
        if x.op is Op.CONST and not isinstance(x.arg, bool):
            return y, x.arg
    return e, 0


def expr_tree(m: Machine, rows, leaves: dict, a, b, deadline: float | None = None) -> Expr:
    """A `where` chain over the control fields with expression leaves.  Where every
    leaf is one expression plus a constant (a count of runs joined across the blocks:
    a.long + b.long, less 1 where both ends counted the run they share), that
    expression plus the constants' own tree (`_tree`): the offsets are a few values
    over many rows, and the tree splits on the fields that decide them."""
    memo: dict = {}
    text = {r: repr(e) for r, e in leaves.items()}     # each leaf printed once
    parts = {r: _split_offset(e) for r, e in leaves.items()}
    rests = {repr(rest) for rest, _ in parts.values()}
    types = {e.type for e in leaves.values()}
    if len(rests) == 1 and len({text[r] for r in rows}) > 1 and len(types) == 1:
        rest = parts[rows[0]][0]
        type_ = types.pop()
        offsets = {r: (int(c) if type_ is Type.INT else float(c)) for r, (_, c) in parts.items()}
        tree = _tree(m, rows, offsets, a, b, type_, deadline)
        return tree if rest is None else simplify(Expr(Op.ADD, type_, (rest, tree)), memo=memo)

    def go(rows, keys):
        if deadline is not None and time.monotonic() > deadline:
            raise Failed("time ran out tabling the data's combine")
        texts = {text[r] for r in rows}
        if len(texts) == 1:
            return leaves[rows[0]]
        for n, key in _by_gain(m, rows, text, keys, a, b, None):
            seen = sorted({_lookup(m, r, key) for r in rows}, key=lambda v: (str(type(v)), v))
            ref = (a if key[0] == "a" else b)[m.control[key[1]]]
            rest = keys[:n] + keys[n + 1:]
            if ref.type is Type.BOOL:
                return _where(ref, go([r for r in rows if _lookup(m, r, key)], rest),
                              go([r for r in rows if not _lookup(m, r, key)], rest), memo)
            out = go([r for r in rows if _lookup(m, r, key) == seen[-1]], rest)
            for v in reversed(seen[:-1]):
                test = Expr(Op.EQ, Type.BOOL, (ref, const(v, ref.type)))
                out = _where(test, go([r for r in rows if _lookup(m, r, key) == v], rest), out, memo)
            return out
        raise Failed("the data's combine is not a function of the control fields")

    best = None
    for order in (("a", "b"), ("b", "a")):
        keys = [(side, k) for side in order for k in range(len(m.control))]
        t = go(rows, keys)
        if best is None or _size(t) < _size(best):
            best = t
    return best


# --- lifting: copies of the state reached from the other reachable states -------------

@dataclass(frozen=True)
class Added:
    """A field a lift adds: its update reads "acc.<key>" for itself and the other added
    fields, besides the loop's own fields, elements and parameters."""
    key: str
    hint: str
    type: Type
    default: object
    update: Expr
    comment: str
    why: str = ""           # why a combine may need it ("" for a copy: a part of the transition function)


@dataclass(frozen=True)
class LiftSet:
    fields: tuple[Added, ...]
    why: str
    full: bool = False          # the full table (every copy), tried after the minimal ones
    combine: Fn | None = None   # the composition read group by group (`thm3.synth.copies`), over the keys
    related: int = 0            # a copy was dropped as a relation of others: 1 fixed (a multiple, a shift, a
                                # combination), 2 with a factor of parameters


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
    for m2 in _readings(loop, _data_readings(m), deadline, functions=MAX_LIFT_MONOID):
        out += [s for s in _copies_lifts(m2, deadline, limit)
                if all(_keys(s) != _keys(t) for t in out)]
    return sorted(out, key=lambda s: (s.full, len(s.fields)))


def _readings(loop: Loop, variants: list[frozenset], deadline: float, most: int = MAX_STATES,
              functions: int = MAX_MONOID):
    """The machines of `loop` with each variant's fields read as data, where that reading
    is recognised and its data affine (over (+, *), or (max, +) or (min, +)), while time
    is left."""
    from thm3.synth import tropical
    for variant in variants:
        if time.monotonic() > deadline:
            return
        try:
            m = recognise(loop, deadline, as_data=variant, most=most, functions=functions)
            tropical.groups(m)
        except Failed:
            continue
        yield m


def determined_reading(loop: Loop, deadline: float, most: int = MAX_STATES) -> Machine:
    """The loop as a machine whose state determines its transition function: the widest
    control first, and where that is not finite or not determined, the readings with the
    numeric fields that read themselves as data (a lifted loop's buffered sums and their
    slopes are bounded, so finite, and with them the control has more states than the
    route takes).  The widest reading's `Failed`, or its machine, where none is."""
    try:
        m = recognise(loop, deadline, most=most)
    except Failed as e:
        m, first = None, e
    if m is not None and m.determined()[1] is None:
        return m
    for m2 in _readings(loop, _data_readings_of(loop), deadline, most):
        if m2.determined()[1] is None:
            return m2
    if m is None:
        raise first
    return m


def _data_readings_of(loop: Loop) -> list[frozenset]:
    """From the text alone: the numeric fields that read themselves and that no condition
    reads (a count of packets sent beside a token bucket's level: whatever its value, the
    control goes the same way), then those without a remainder (a phase mod 4 is control),
    then all of them."""
    numeric = _self_reading(loop)
    variants = (tuple(_unconditioned(loop, numeric)), tuple(_self_counts(loop)), tuple(numeric))
    return [frozenset(v) for v in dict.fromkeys(variants) if v]


def _unconditioned(loop: Loop, fields: list[int]) -> list[int]:
    """Those of `fields` that no comparison, selection's condition, min, max or abs in
    `left` reads: they steer nothing."""
    steering = set()
    for e in walk(list(loop.left.outputs)):
        if e.op in COMPARISONS or e.op in (Op.MIN, Op.MAX, Op.ABS):
            steering |= free_vars([e])
        elif e.op is Op.WHERE:
            steering |= free_vars([e.src[0]])
    return [i for i in fields if f"acc.{loop.fields[i].name}" not in steering]


def _self_reading(loop: Loop) -> list[int]:
    """The numeric fields whose update reads themselves."""
    return [i for i, f in enumerate(loop.fields) if f.type in (Type.INT, Type.REAL)
            and f"acc.{f.name}" in free_vars([loop.left.outputs[i]])]


def _self_counts(loop: Loop) -> list[int]:
    """The numeric fields whose value is, in some branch, arithmetic on themselves and
    never a remainder (a count, a buffered sum: data-like, where a phase mod 4 and a mode
    set to constants are control)."""
    out = []
    for i, f in enumerate(loop.fields):
        leaves = _leaves(loop.left.outputs[i])
        if f.type in (Type.INT, Type.REAL) and not any(e.op is Op.MOD for e in leaves) and any(
                e.op in (Op.ADD, Op.SUB, Op.MUL) and f"acc.{f.name}" in free_vars([e]) for e in leaves):
            out.append(i)
    return out


def _leaves(e: Expr) -> list[Expr]:
    """The values a where-tree selects among (its conditions left out)."""
    return _leaves(e.src[1]) + _leaves(e.src[2]) if e.op is Op.WHERE else [e]


def _keys(s: LiftSet) -> tuple:
    return tuple(a.key for a in s.fields)


def _data_readings(m: Machine) -> list[frozenset]:
    """The control fields that may be read as data instead: the numeric ones whose update
    reads themselves (a count, a buffered sum), all at once (where some control is left)
    and each alone."""
    numeric = [i for i in _self_reading(m.loop) if i in m.control]
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
    groups = _groups_or_none(m)
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
    groups = _groups_or_none(m)
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
        added, replaced, related = _drop_copied_data(m, added, deadline, slope_keys, roles, relate)
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
                update = _homogeneous(simplify(stepped), data_index, slope)
                if update is None:
                    return None
                one = 1 if ii == jj else 0
                roles[f"fsm{qi}_d{ii}_{jj}"] = ("slope", qi, ii, jj)
                hint = f"pw_from{qi}" if len(idx) == 1 else f"slope_{names[ii]}_{names[jj]}_from{qi}"
                out.append(Added(f"fsm{qi}_d{ii}_{jj}", hint, dtype, one if dtype is Type.INT else float(one),
                                 simplify(update), f"how {names[ii]} scales the {names[jj]} before the list, "
                                 f"from {show_state(m, m.states[qi])} (the product of its coefficients)"))
    return out


def _groups_or_none(m: Machine) -> dict | None:
    """`tropical.groups`, None where the data is in no semiring (or there is none)."""
    from thm3.synth import tropical
    try:
        return tropical.groups(m) if m.data else None
    except Failed:
        return None


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


def _random_and_walked(m: Machine, deadline: float, seed: int, count: int, shortest: int, longest: int,
                       walks: int) -> list[tuple[list, dict]]:
    """`count` random lists of `shortest` to `longest` elements (small values every other
    one) and `walks` walks over the control's moves, each with its parameters."""
    from thm3.semantics.samples import Domain
    rng = np.random.default_rng(seed)
    dom = Domain(m.loop, deadline=deadline)
    lists = []
    for i in range(count):
        params = dom.params(rng, small=True)
        lists.append((dom.random_list(rng, params, int(rng.integers(shortest, longest + 1)), small=i % 2 == 0),
                      params))
    return lists + walked_lists(m, dom, rng, walks, min(16, max(8, 2 * len(m.states) + 2)))


def _passes_start(m: Machine, groups: dict | None, fields: frozenset[int], deadline: float) -> bool:
    """Whether, on sampled lists, a field of `fields` (over (max, +), (min, +) ...) reaches
    a value past its start on the semiring's side: below it under max, above it under
    min.  A copy from the start then is no offset of the composed map."""
    loop = m.loop
    lists = _random_and_walked(m, deadline, seed=2, count=24, shortest=1, longest=8, walks=24)
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
    step_matrix = _step_matrices(m, rows)
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


def _homogeneous(e: Expr, data_index: dict, slope: dict) -> Expr | None:
    """The linear part of a data update `e` (its where-branches split on data-free
    conditions, each branch affine in the data with constant coefficients), with data
    field l read as `slope[l]`: the update of the product of the coefficients.  A branch
    inside the arithmetic (total + (buf + 1 if x else buf)) is hoisted first."""
    e = hoisted(e, set(data_index))
    if e is None:
        return None
    if e.op is Op.WHERE:
        c, x, y = e.src
        if free_vars([c]) & set(data_index):
            return None
        hx, hy = _homogeneous(x, data_index, slope), _homogeneous(y, data_index, slope)
        if hx is None or hy is None:
            return None
        t = Type.REAL if Type.REAL in (hx.type, hy.type) else hx.type
        return Expr(Op.WHERE, t, (c, hx, hy))
    lin = affine_form(e, data_index)
    if lin is None:
        return None
    out = None
    for ll, coefficient in lin.items():
        if ll in ("", MODULUS) or (not symbolic(coefficient) and coefficient == 0.0):
            continue
        s = slope[ll]
        if symbolic(coefficient):
            if s.type is Type.INT and coefficient.type is not Type.INT:
                return None             # a Real coefficient of an Int slope
            term = Expr(Op.MUL, s.type, (coefficient, s))
        else:
            term = s if coefficient == 1.0 else Expr(Op.MUL, s.type, (_coef_expr(coefficient, s.type), s))
        out = term if out is None else _add(out, term)
    if out is None:
        t = next(iter(slope.values())).type
        return const(0 if t is Type.INT else 0.0, t)
    if MODULUS in lin:
        return Expr(Op.MOD, out.type, (out,), lin[MODULUS])
    return out


def hoisted(e: Expr, data: set, budget: list | None = None) -> Expr | None:
    """`e` with every where-branch on a data-free condition moved above the arithmetic
    around it: op(where(c, x, y), z) is where(c, op(x, z), op(y, z)).  None past
    HOIST_NODES built nodes (the branches multiply)."""
    budget = [HOIST_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return None
    if e.op is Op.WHERE:
        c, x, y = e.src
        hx, hy = hoisted(x, data, budget), hoisted(y, data, budget)
        return None if hx is None or hy is None else Expr(Op.WHERE, e.type, (c, hx, hy))
    if e.op not in (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.MOD, Op.MAX, Op.MIN) or not (free_vars([e]) & data):
        return e
    src = [hoisted(a, data, budget) for a in e.src]
    if any(a is None for a in src):
        return None
    for n, a in enumerate(src):
        if a.op is Op.WHERE and not (free_vars([a.src[0]]) & data):
            c, x, y = a.src
            return hoisted(Expr(Op.WHERE, e.type, (c, Expr(e.op, e.type, tuple(src[:n] + [x] + src[n + 1:]), e.arg),
                                                  Expr(e.op, e.type, tuple(src[:n] + [y] + src[n + 1:]), e.arg))),
                            data, budget)
    return Expr(e.op, e.type, tuple(src), e.arg)


HOIST_NODES = 400


DROP_WALKS = 200        # walks over the control's moves that a dropped data copy must agree on


def fold_batched(loop: Loop, lists: list[tuple[list, dict]]) -> list[tuple]:
    """Each (xs, params) folded from the initial state, as `fold_left` (dim 1) would: the
    lists of one length at once, their elements and parameters as NumPy lanes."""
    from thm3.semantics.samples import init_state, step
    by_len: dict[int, list[int]] = {}
    for n, (xs, _) in enumerate(lists):
        by_len.setdefault(len(xs), []).append(n)
    out: list = [None] * len(lists)
    names = [d.name for d in loop.params]
    for length, idx in by_len.items():
        lanes = len(idx)
        state = tuple(np.broadcast_to(np.asarray(v), (lanes,)).copy() for v in init_state(loop, 1))
        params = {p: np.array([lists[n][1][p] for n in idx]) for p in names}
        for t in range(length):
            element = tuple(np.array([lists[n][0][t][j] for n in idx]) for j in range(len(loop.elements)))
            state = tuple(np.broadcast_to(np.asarray(v), (lanes,)) for v in step(loop.left, state, element, params))
        for lane, n in enumerate(idx):
            out[n] = tuple(v[lane] for v in state)
    return out


def _drop_copied_data(m: Machine, added: list[Added], deadline: float, slopes=frozenset(),
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
    lists = _random_and_walked(m, deadline, seed=1, count=40, shortest=0, longest=6, walks=DROP_WALKS)
    if time.monotonic() > deadline:         # (folding them with 40 copies: seconds)
        raise Failed("time ran out reading the copies lift")
    cols = np.array(fold_batched(mega, lists), dtype=float).T
    k = len(loop.fields)
    params = _parameters_of(m, lists) if relate > 1 else None
    data_keys = {f"fsm{qi}_{loop.fields[j].name}" for qi in range(len(m.states)) for j in m.data}
    data_keys |= set(slopes)
    # the zero of each copy's semiring, over (max, +), (min, +), (max, *), (min, *): a copy
    # that stays there on every list is read as it, even by the others (`_at_zero`)
    zero_of = {f"fsm{qi}_{loop.fields[j].name}": float(s.zero) for s, idx in (_groups_or_none(m) or {}).items()
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
    got = _groups_or_none(m)
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
    lists = _random_and_walked(m, deadline, seed=2, count=80, shortest=0, longest=12, walks=DROP_WALKS)
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


def with_added(loop: Loop, added) -> Loop:
    """`loop` with the `added` fields (named by their keys) after its own: `left` updates
    them too; no right fold and no result (a loop to fold and to recognise, not to show)."""
    from dataclasses import replace as dc_replace
    from thm3.ir import FieldDecl
    fields = tuple(loop.fields) + tuple(FieldDecl(a.key, a.type, a.default) for a in added)
    state = tuple((f"acc.{f.name}", f.type) for f in fields)
    left = Fn(state + tuple((d.name, d.type) for d in loop.elements) + tuple((d.name, d.type) for d in loop.params),
              tuple(loop.left.outputs) + tuple(a.update for a in added))
    return dc_replace(loop, fields=fields, left=left, right=None, result=None)


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
    lists += [(xs, p) for xs, p, _ in _steered_lists(m, dom, rng, list(range(len(m.states))), longest,
                                                       per_target=4 if len(m.states) <= 24 else 2)]
    fields = loop.fields
    by_state: dict[tuple, list] = {}
    for whole in fold_batched(loop, lists):
        st = tuple(_plain(whole[j], fields[j].type) for j in m.control)
        by_state.setdefault(st, []).append([_plain(whole[j], fields[j].type) for j in m.data])
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


def cell_elements(m: Machine) -> list[tuple] | None:
    """One element a cell (a tuple of the element parameters' values): the cell's value,
    or a Z3 model of its sign vector; None where a cell has none here (atoms that read
    loop parameters, or that Z3 cannot read)."""
    import z3
    loop = m.loop
    names = [d.name for d in loop.elements]
    if not m.atoms and all(n in cell for cell in m.cells for n in names):
        return [tuple(cell[n].arg for n in names) for cell in m.cells]
    # (no atoms and no values: the element does not enter the control, one cell, any element
    # the preconditions admit stands for it)
    if loop.params:
        return None
    syms: dict = {}
    terms = [to_z3(a, syms) for a in m.atoms]
    pre = [to_z3(p, syms) for p in loop.preconditions]
    if any(t is None for t in terms) or any(p is None for p in pre):
        return None
    out = []
    for cell in m.cells:
        s = z3.Solver()
        s.set("timeout", 200)
        s.add(*pre)
        s.add(*[(t if cell[f"cell.{i}"].arg else z3.Not(t)) if a.type is Type.BOOL else t == cell[f"cell.{i}"].arg
                for i, (a, t) in enumerate(zip(m.atoms, terms))])
        if s.check() != z3.sat:
            return None
        model = s.model()
        values = []
        for d in loop.elements:
            sym = syms.get(d.name)
            v = None if sym is None else model.eval(sym, model_completion=True)
            match d.type:
                case Type.BOOL:
                    values.append(bool(v is not None and z3.is_true(v)))
                case Type.INT:
                    values.append(0 if v is None else v.as_long())
                case Type.REAL:
                    values.append(0.0 if v is None else float(Fraction(str(v.as_fraction()))))
                case _:
                    return None
        out.append(tuple(values))
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
            q = _first_diff(f, g)
            if q not in reach:
                continue
            out.append(tuple([reps[c] for c in w] for w in (words[f], words[g], reach[q])))
            if len(out) >= limit:
                return out
    return out
