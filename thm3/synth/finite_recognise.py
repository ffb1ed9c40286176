"""Recognition for the finite-state route (`thm3.synth.finite`): the element domain split
into cells by the predicates through which the element enters the step (or by its finitely
many values), the control fields found by a bounded breadth-first search of the reachable
states, and the transition functions of lists, the monoid.  The readings that take the
numeric fields reading themselves as data come here too: the widest control whose state
determines its transition function."""
from __future__ import annotations

import itertools
import time

from thm3.ir import COMPARISONS, Expr, Loop, Op, Type, const, free_vars, initial_state, substitute, transform, var, walk
from thm3.ir.simplify import simplify
from thm3.semantics.evaluate import PYTHON, compiled
from thm3.semantics.z3_plain import to_z3
from thm3.synth.finite_machine import Failed, Machine, plain_value


MAX_STATES = 64         # reachable control states (a 4-mode scanner lifted by its copies: 57)
MAX_MONOID = 400        # transition functions of lists
MAX_CELLS = 16          # cells of the element domain
MAX_ATOMS = 5           # predicates Z3 cannot read (2**MAX_ATOMS sign vectors at most)
MAX_PREDICATES = 24     # predicates on the element, split into cells by Z3


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
        outputs_c = list(replace_atoms(outputs, atoms, [f"cell.{i}" for i in range(len(atoms))]))
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
    unbounded_fields = unbounded_by_intervals(loop)
    while True:
        # fields without bounds by interval reasoning leave first, where the rest of the
        # control is closed without them (the reasoning ignores guards: a streak reset at
        # 4 has no bound there, and with it gone the level, which reads it, goes too)
        unbounded = unbounded_fields & set(control)
        if unbounded and not _closed([i for i in control if i not in unbounded], outputs_c, names):
            unbounded = frozenset()
        got = explore(loop, control, outputs_c, cells, init, deadline, limit=most, unbounded=unbounded)
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
    monoid = transition_monoid(table, len(states), deadline, functions)
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


def replace_atoms(outputs, atoms, names):
    """`outputs` with each atom (the interned node) replaced by the Bool variable of its cell."""
    keys = {a: var(n, a.type) for a, n in zip(atoms, names)}

    def rule(e, go):
        return keys[e] if e in keys and e.type in (Type.BOOL, Type.INT) and _state_free(e) else None
    return transform(outputs, rule)


def unbounded_by_intervals(loop: Loop) -> frozenset[int]:
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


def explore(loop, control, outputs, cells, init, deadline, starts=(), limit=MAX_STATES, unbounded=frozenset()):
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
            nxt = tuple(plain_value(v, fields[j].type) for j, v in zip(control, vals))
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


def transition_monoid(table, n: int, deadline: float, most: int = MAX_MONOID) -> dict:
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


def readings(loop: Loop, variants: list[frozenset], deadline: float, most: int = MAX_STATES,
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
    for m2 in readings(loop, _data_readings_of(loop), deadline, most):
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
    numeric = self_reading(loop)
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


def self_reading(loop: Loop) -> list[int]:
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
