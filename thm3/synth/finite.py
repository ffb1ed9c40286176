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
from fractions import Fraction

import numpy as np

from thm3.ir import COMPARISONS, Expr, Fn, Loop, Op, Type, const, free_vars, initial_state, substitute, var, walk
from thm3.ir.simplify import simplify
from thm3.semantics.evaluate import PYTHON, evaluate

MAX_STATES = 48         # reachable control states
MAX_MONOID = 400        # transition functions of lists
MAX_CELLS = 16          # cells of the element domain
MAX_ATOMS = 5           # predicates on the element (2**MAX_ATOMS sign vectors at most)


class Failed(Exception):
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
    subterms over the element and parameters only (comparisons, and Bool elements)."""
    elements = {d.name for d in loop.elements}
    out: list[Expr] = []
    seen: set[str] = set()

    def visit(e: Expr):
        names = free_vars([e])
        if e.type is Type.BOOL and names & elements and _state_free(e) and (
                e.op in COMPARISONS or e.op is Op.VAR or e.op in (Op.AND, Op.OR, Op.NOT)):
            for a in _atoms_of(e):
                if repr(a) not in seen:
                    seen.add(repr(a))
                    out.append(a)
            return
        for s in e.src:
            visit(s)

    memo: set[int] = set()
    for e in walk(outputs):
        memo.add(id(e))
    for e in outputs:
        visit(e)
    return out


def _atoms_of(e: Expr) -> list[Expr]:
    if e.op in (Op.AND, Op.OR, Op.NOT):
        return [a for s in e.src for a in _atoms_of(s)]
    return [e]


def _z3_term(e: Expr, z3, syms: dict):
    """`e` as a Z3 term (elements and parameters as free constants); None if some op has
    no exact Z3 reading here."""
    args = [_z3_term(s, z3, syms) for s in e.src]
    if any(a is None for a in args):
        return None
    match e.op:
        case Op.CONST:
            if isinstance(e.arg, bool):
                return z3.BoolVal(e.arg)
            if not math.isfinite(float(e.arg)):
                return None
            return z3.IntVal(int(e.arg)) if e.type is Type.INT else z3.RealVal(Fraction(float(e.arg)))
        case Op.VAR:
            if e.arg not in syms:
                make = {Type.BOOL: z3.Bool, Type.INT: z3.Int, Type.REAL: z3.Real}.get(e.type)
                if make is None:
                    return None
                syms[e.arg] = make(e.arg)
            return syms[e.arg]
        case Op.ADD:
            return args[0] + args[1]
        case Op.SUB:
            return args[0] - args[1]
        case Op.MUL:
            return args[0] * args[1]
        case Op.NEG:
            return -args[0]
        case Op.LT:
            return args[0] < args[1]
        case Op.LE:
            return args[0] <= args[1]
        case Op.GT:
            return args[0] > args[1]
        case Op.GE:
            return args[0] >= args[1]
        case Op.EQ:
            return args[0] == args[1]
        case Op.NE:
            return args[0] != args[1]
        case Op.AND:
            return z3.And(*args)
        case Op.OR:
            return z3.Or(*args)
        case Op.NOT:
            return z3.Not(args[0])
        case Op.MOD if e.type is Type.INT:
            return args[0] % e.arg
        case Op.WHERE:
            return z3.If(*args)
        case Op.MAX:
            return z3.If(args[0] >= args[1], args[0], args[1])
        case Op.MIN:
            return z3.If(args[0] <= args[1], args[0], args[1])
        case Op.ABS:
            return z3.If(args[0] >= 0, args[0], -args[0])
        case _:
            return None


def atom_cells(loop: Loop, atoms: list[Expr]) -> list[tuple[bool, ...]]:
    """The sign vectors of `atoms` that some element satisfies under the loop's
    preconditions (for some parameters): each one cell.  Where Z3 cannot read an atom,
    every sign vector is kept (more cells: the monoid found is then a superset)."""
    import z3
    vectors = list(itertools.product((True, False), repeat=len(atoms)))
    syms: dict = {}
    terms = [_z3_term(a, z3, syms) for a in atoms]
    pre = [_z3_term(p, z3, syms) for p in loop.preconditions]
    if any(t is None for t in terms) or any(p is None for p in pre):
        return vectors
    out = []
    for v in vectors:
        s = z3.Solver()
        s.set("timeout", 200)
        s.add(*pre)
        s.add(*[t if b else z3.Not(t) for t, b in zip(terms, v)])
        if s.check() != z3.unsat:
            out.append(v)
    return out


def finite_elements(loop: Loop) -> list[dict] | None:
    """Every value of the (Int or Bool) elements the preconditions admit, where they are
    at most MAX_CELLS (enumerated with Z3); None where they are more or not all Int."""
    import z3
    if not loop.preconditions or any(d.type not in (Type.INT, Type.BOOL) for d in loop.elements):
        return None
    params = {d.name for d in loop.params}
    syms: dict = {}
    pre = [_z3_term(p, z3, syms) for p in loop.preconditions]
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


def recognise(loop: Loop, deadline: float | None = None) -> Machine:
    """The loop as a machine, or `Failed` saying why it is not one (fast on loops outside
    the class: a syntactic test first, then a bounded search)."""
    deadline = time.monotonic() + 2.0 if deadline is None else deadline
    fields = loop.fields
    if any(f.type is Type.VEC for f in fields):
        raise Failed("a Vec field")
    elements = {d.name for d in loop.elements}
    params = {d.name for d in loop.params}
    outputs = list(loop.left.outputs)
    atoms = element_atoms(loop, outputs)
    cells: list[dict]
    mapping = {}
    if len(atoms) <= MAX_ATOMS:
        names = [f"cell.{i}" for i in range(len(atoms))]
        for a, n in zip(atoms, names):
            mapping[id(a)] = var(n, Type.BOOL)
        outputs_c = list(_replace_atoms(outputs, atoms, names))
    else:
        outputs_c = outputs
    # control: fields whose update reads no element (past the atoms) and no parameter,
    # closed under what they read
    control = [i for i, e in enumerate(outputs_c) if not (free_vars([e]) & (elements | params))
               and fields[i].type in (Type.BOOL, Type.INT, Type.REAL)]
    by_value = None
    if len(control) < len(fields) and not any(free_vars([outputs[i]]) & params for i in range(len(fields))):
        by_value = finite_elements(loop)
    if by_value is not None and len(by_value) <= MAX_CELLS:
        # the element takes finitely many values: each value its own cell
        atoms = ()
        cells = [{n: const(v, d.type) for d in loop.elements for n, v in [(d.name, val[d.name])]}
                 for val in by_value]
        outputs_c = outputs
        control = [i for i, e in enumerate(outputs) if not (free_vars([e]) & params)]
    else:
        if len(atoms) > MAX_ATOMS:
            raise Failed(f"the element enters through {len(atoms)} predicates (at most {MAX_ATOMS})")
        vectors = atom_cells(loop, atoms)
        cells = [{f"cell.{i}": const(b) for i, b in enumerate(v)} for v in vectors]
        atoms = tuple(atoms)
    if not cells:
        raise Failed("no element satisfies the preconditions")
    if len(cells) > MAX_CELLS:
        raise Failed(f"{len(cells)} cells of the element (at most {MAX_CELLS})")
    names = {f"acc.{f.name}": i for i, f in enumerate(fields)}
    changed = True
    while changed:
        changed = False
        for i in list(control):
            reads = {names[n] for n in free_vars([outputs_c[i]]) if n in names}
            if not reads <= set(control):
                control.remove(i)
                changed = True
    if not control:
        raise Failed("no field is finite control (each update reads the element or a parameter)")
    init = [e.arg for e in initial_state(loop)]
    while True:
        got = _explore(loop, control, outputs_c, cells, init, deadline)
        if isinstance(got, tuple):
            break
        # too many states: the fields with the most values are data, not control
        grown = got
        control = [i for i in control if i not in grown]
        changed = True
        while changed:
            changed = False
            for i in list(control):
                reads = {names[n] for n in free_vars([outputs_c[i]]) if n in names}
                if not reads <= set(control):
                    control.remove(i)
                    changed = True
        if not control:
            raise Failed(f"more than {MAX_STATES} reachable states: no finite control part")
    states, table = got
    data = tuple(i for i in range(len(fields)) if i not in control)
    for i in data:
        if fields[i].type not in (Type.INT, Type.REAL):
            raise Failed(f"field {fields[i].name} is neither finite control nor a number")
    monoid = _monoid(table, len(states), deadline)
    return Machine(loop, tuple(control), data, tuple(atoms), tuple(cells), tuple(states), table, monoid)


def _replace_atoms(outputs, atoms, names):
    keys = {repr(a): var(n, Type.BOOL) for a, n in zip(atoms, names)}

    def rule(e, go):
        return keys.get(repr(e)) if e.type is Type.BOOL and _state_free(e) and repr(e) in keys else None
    from thm3.ir import transform
    return transform(outputs, rule)


def _explore(loop, control, outputs, cells, init, deadline):
    """Breadth-first search of the control states from the initial one: (states, table),
    or the set of fields whose values grew past the bound."""
    fields = loop.fields
    start = tuple(init[i] for i in control)
    states = [start]
    index = {start: 0}
    rows: list[list[int]] = [[] for _ in cells]
    outs = [outputs[i] for i in control]
    i = 0
    while i < len(states):
        if time.monotonic() > deadline:
            raise Failed("time ran out exploring the states")
        env = {f"acc.{fields[j].name}": v for j, v in zip(control, states[i])}
        for c, cell in enumerate(cells):
            vals = evaluate([simplify(e) for e in substitute(outs, cell)], env, PYTHON)
            nxt = tuple(_plain(v, fields[j].type) for j, v in zip(control, vals))
            if any(isinstance(v, float) and not math.isfinite(v) for v in nxt):
                pass
            if nxt not in index:
                if len(states) >= MAX_STATES:
                    values = [{s[k] for s in states} for k in range(len(control))]
                    top = max(len(v) for v in values)
                    return {j for j, v in zip(control, values) if len(v) == top and fields[j].type is not Type.BOOL} \
                        or set(control)
                index[nxt] = len(states)
                states.append(nxt)
            rows[c].append(index[nxt])
        i += 1
    return tuple(states), tuple(tuple(r) for r in rows)


def _plain(v, type_: Type):
    v = np.asarray(v).item() if not isinstance(v, (bool, int, float)) else v
    if type_ is Type.BOOL:
        return bool(v)
    if type_ is Type.INT:
        return int(v)
    return float(v)


def _monoid(table, n: int, deadline: float) -> dict:
    """The transition functions of nonempty lists, breadth first from the cells'."""
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
                    if len(found) >= MAX_MONOID:
                        raise Failed(f"more than {MAX_MONOID} transition functions")
                    found[g] = found[f] + (c,)
                    nxt.append(g)
        frontier = nxt
    return found


# --- synthesis -----------------------------------------------------------------------

def synthesize(loop: Loop, deadline: float) -> tuple[Fn, str]:
    """The composition combine of a loop in the class, or `Failed` with the class it was
    recognised as and what failed."""
    m = recognise(loop, deadline)
    by_state, clash = m.determined()
    if clash is not None:
        f, g = clash
        raise Failed(f"recognised as {m.describe()}; but the state does not determine its transition "
                     f"function: lists {_word(m, f)} and {_word(m, g)} reach "
                     f"{_show(m, m.states[f[0]])} from the start and differ from "
                     f"{_show(m, m.states[_first_diff(f, g)])}: a lift is needed")
    fields = loop.fields
    a = {i: var(f"a.{fields[i].name}", fields[i].type) for i in range(len(fields))}
    b = {i: var(f"b.{fields[i].name}", fields[i].type) for i in range(len(fields))}
    outs: dict[int, Expr] = {}
    rows = [(q, r) for r in by_state for q in range(len(m.states))]
    # control: out(a, b) = f_b(a), a table over (a's state, b's state)
    for k, i in enumerate(m.control):
        values = {(q, r): m.states[by_state[r][q]][k] for q, r in rows}
        outs[i] = _tree(m, rows, values, a, b, fields[i].type)
    if m.data:
        outs.update(_data_combine(m, by_state, a, b, deadline))
    names = tuple((f"a.{f.name}", f.type) for f in fields) + tuple((f"b.{f.name}", f.type) for f in fields) \
        + tuple((d.name, d.type) for d in loop.params)
    how = f"composition of transition functions ({m.describe()})"
    return Fn(names, tuple(outs[i] for i in range(len(fields)))), how


def _word(m: Machine, f) -> str:
    cells = m.monoid.get(f, ())
    return "[" + ", ".join(_cell_text(m, c) for c in cells) + "]"


def _cell_text(m: Machine, c: int) -> str:
    cell = m.cells[c]
    if not m.atoms:
        return "/".join(f"{v.arg}" for v in cell.values())
    return " & ".join(("" if cell[f"cell.{i}"].arg else "not ") + repr(a) for i, a in enumerate(m.atoms))


def _show(m: Machine, s: tuple) -> str:
    return "(" + ", ".join(f"{n}={v}" for n, v in zip(m.names(m.control), s)) + ")"


def _first_diff(f, g) -> int:
    return next(i for i, (x, y) in enumerate(zip(f, g)) if x != y)


def _tree(m: Machine, rows, values: dict, a: dict, b: dict, type_: Type) -> Expr:
    """A `where` chain over a's and b's control fields whose value on each row (a's
    state q, b's state r) is `values[(q, r)]`: split on one field at a time, with
    leaves that are constants or one of the fields (or its negation).  Both orders of
    the operands are tried; the smaller tree is kept."""
    ctrl = list(m.control)
    best = None
    for order in (("b", "a"), ("a", "b")):
        keys = [(side, k) for side in order for k in range(len(ctrl))]
        t = _split(m, rows, values, keys, a, b, type_)
        if best is None or _size(t) < _size(best):
            best = t
    return best


def _size(e: Expr) -> int:
    return len(walk([e]))


def _lookup(m: Machine, row, key):
    side, k = key
    q, r = row
    return m.states[q if side == "a" else r][k]


def _split(m: Machine, rows, values, keys, a, b, type_) -> Expr:
    vals = {values[r] for r in rows}
    if len(vals) == 1:
        return const(_plain(vals.pop(), type_), type_)
    for key in keys:
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        if ref.type is not type_:
            continue
        if all(_lookup(m, r, key) == values[r] for r in rows):
            return ref
        if type_ is Type.BOOL and all(_lookup(m, r, key) != values[r] for r in rows):
            return Expr(Op.NOT, Type.BOOL, (ref,))
    for n, key in enumerate(keys):
        seen = sorted({_lookup(m, r, key) for r in rows}, key=lambda v: (str(type(v)), v))
        if len(seen) < 2:
            continue
        ref = (a if key[0] == "a" else b)[m.control[key[1]]]
        rest = keys[:n] + keys[n + 1:]
        if ref.type is Type.BOOL:
            yes = [r for r in rows if _lookup(m, r, key)]
            no = [r for r in rows if not _lookup(m, r, key)]
            return _where(ref, _split(m, yes, values, rest, a, b, type_), _split(m, no, values, rest, a, b, type_))
        out = _split(m, [r for r in rows if _lookup(m, r, key) == seen[-1]], values, rest, a, b, type_)
        for v in reversed(seen[:-1]):
            sub = [r for r in rows if _lookup(m, r, key) == v]
            test = Expr(Op.EQ, Type.BOOL, (ref, const(v, ref.type)))
            out = _where(test, _split(m, sub, values, rest, a, b, type_), out)
        return out
    raise Failed("the table is not a function of the control fields")


def _where(c: Expr, x: Expr, y: Expr) -> Expr:
    return simplify(Expr(Op.WHERE, x.type if x.type is y.type else Type.REAL, (c, x, y)))


# --- finite control with linear data --------------------------------------------------

def affine_rows(m: Machine) -> dict:
    """Per (control state, cell): each data field's update as {data field index ->
    constant coefficient, "": the rest}; `Failed` where it is not affine in the data
    with constant coefficients."""
    loop = m.loop
    fields = loop.fields
    outputs = list(_replace_atoms(list(loop.left.outputs), m.atoms,
                                  [f"cell.{i}" for i in range(len(m.atoms))])) if m.atoms else list(loop.left.outputs)
    data_names = {f"acc.{fields[i].name}": i for i in m.data}
    out = {}
    for q, s in enumerate(m.states):
        env = {f"acc.{fields[j].name}": const(v, fields[j].type) for j, v in zip(m.control, s)}
        for c, cell in enumerate(m.cells):
            exprs = [simplify(e) for e in substitute([outputs[i] for i in m.data], env | cell)]
            rows = []
            for e in exprs:
                lin = _affine(e, data_names)
                if lin is None:
                    raise Failed(f"recognised control ({', '.join(m.names(m.control))}); the update "
                                 f"{e!r} is not affine in ({', '.join(m.names(m.data))})")
                rows.append(lin)
            out[(q, c)] = rows
    return out


def _affine(e: Expr, names: dict) -> dict | None:
    """`e` as sum of constant * data field plus a data-free rest: {index: coefficient,
    "": rest expression or None}."""
    if not (free_vars([e]) & set(names)):
        return {"": e}
    match e.op:
        case Op.VAR:
            return {names[e.arg]: 1.0, "": None}
        case Op.ADD | Op.SUB:
            x, y = (_affine(s, names) for s in e.src)
            if x is None or y is None:
                return None
            sign = 1.0 if e.op is Op.ADD else -1.0
            out = {k: v for k, v in x.items() if k != ""}
            for k, v in y.items():
                if k != "":
                    out[k] = out.get(k, 0.0) + sign * v
            rest = [r for r in (x[""], y[""]) if r is not None]
            if len(rest) == 2:
                out[""] = Expr(e.op, e.type, tuple(rest))
            elif y[""] is not None and e.op is Op.SUB:
                out[""] = Expr(Op.NEG, y[""].type, (y[""],))
            else:
                out[""] = rest[0] if rest else None
            return out
        case Op.NEG:
            x = _affine(e.src[0], names)
            if x is None:
                return None
            out = {k: -v for k, v in x.items() if k != ""}
            out[""] = None if x[""] is None else Expr(Op.NEG, x[""].type, (x[""],))
            return out
        case Op.MUL:
            for s, t in (e.src, e.src[::-1]):
                if t.op is Op.CONST and not isinstance(t.arg, bool):
                    x = _affine(s, names)
                    if x is None:
                        return None
                    out = {k: float(t.arg) * v for k, v in x.items() if k != ""}
                    out[""] = None if x[""] is None else Expr(Op.MUL, e.type, (x[""], t))
                    return out
            return None
        case _:
            return None


def _data_combine(m: Machine, by_state: dict, a: dict, b: dict, deadline: float) -> dict:
    """Each data field of the combine: d = sum over a's control state q of [a at q] *
    (A_q d_a + v_q), where A_q, the product of the step coefficients of b's list from
    q, is read off b's control state, and v_q, the data b's list adds from q (data 0),
    is fitted as a linear combination of b's data fields on folded lists (then proved)."""
    from thm3.semantics.samples import Domain, fold_left
    loop = m.loop
    fields = loop.fields
    rows = affine_rows(m)
    nd = len(m.data)
    # the coefficient matrices of each transition function, from each control state
    coef: dict[tuple, tuple] = {}

    def step_matrix(q, c):
        return np.array([[rows[(q, c)][r].get(m.data[j], 0.0) for j in range(nd)] for r in range(nd)])

    for f, word in m.monoid.items():
        mats = []
        for q in range(len(m.states)):
            mat, s = np.eye(nd), q
            for c in word:
                mat = step_matrix(s, c) @ mat
                s = m.table[c][s]
            mats.append(mat)
        coef[f] = tuple(mats)
    # the coefficients must be read off b's control state: equal for every word of f
    # (checked on the cells' generators: f's coefficients compose as the table does)
    for f, word in m.monoid.items():
        for c, row in enumerate(m.table):
            g = tuple(row[j] for j in f)
            for q in range(len(m.states)):
                if not np.allclose(step_matrix(f[q], c) @ coef[f][q], coef[g][q]):
                    raise Failed(f"recognised as {m.describe()}; the data's coefficients are not a function "
                                 "of the transition function (a lift is needed)")
    rng = np.random.default_rng(0)
    dom = Domain(loop)
    samples = []
    for i in range(48):
        params = dom.params(rng, small=True)
        n = int(rng.integers(0, 6))
        xs = dom.random_list(rng, params, n, small=i % 2 == 0)
        samples.append((xs, params))
    init = [e.arg for e in initial_state(loop)]
    out = {}
    for k, i in enumerate(m.data):
        per_state: dict[int, dict[int, Expr]] = {}
        for r in by_state:
            per_state[r] = {}
        for q in range(len(m.states)):
            start = list(init)
            for j, v in zip(m.control, m.states[q]):
                start[j] = v
            for j in m.data:
                start[j] = 0 if fields[j].type is Type.INT else 0.0
            got: dict[int, list] = {}
            for xs, params in samples:
                whole = fold_left(loop, xs, params, dim=1)
                r_state = tuple(_plain(whole[j], fields[j].type) for j in m.control)
                r = m.states.index(r_state) if r_state in m.states else None
                if r is None:
                    continue
                from_q = fold_left(loop, xs, params, state=tuple(np.asarray(v) for v in start), dim=1)
                got.setdefault(r, []).append(([float(whole[j]) for j in m.data] + [1.0], float(from_q[i])))
            for r in by_state:
                pts = got.get(r)
                if not pts:
                    raise Failed(f"recognised as {m.describe()}; no sampled list reaches {_show(m, m.states[r])}")
                mat = np.array([p for p, _ in pts])
                rhs = np.array([v for _, v in pts])
                sol, *_ = np.linalg.lstsq(mat, rhs, rcond=None)
                if not np.allclose(mat @ sol, rhs, atol=1e-7):
                    raise Failed(f"recognised as {m.describe()}; the data b adds from "
                                 f"{_show(m, m.states[q])} is not linear in b's fields: a lift is needed")
                per_state[r][q] = _linear_expr([round(float(x), 9) for x in sol], [b[j] for j in m.data],
                                               fields[i].type)
        # combine: where over b's state r, then a's state q: A[f_r][q] row k . a.data + v
        leaves: dict[tuple, Expr] = {}
        for r, f in by_state.items():
            for q in range(len(m.states)):
                arow = coef[f][q][k] if f in coef else np.eye(nd)[k]
                lin = _linear_expr([float(x) for x in arow] + [0.0], [a[j] for j in m.data], fields[i].type)
                leaves[(q, r)] = _add(lin, per_state[r][q])
        out[i] = _expr_tree(m, list(leaves), leaves, a, b)
    return out


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


def _expr_tree(m: Machine, rows, leaves: dict, a, b) -> Expr:
    """A `where` chain over the control fields with expression leaves."""
    def go(rows, keys):
        texts = {repr(leaves[r]) for r in rows}
        if len(texts) == 1:
            return leaves[rows[0]]
        for n, key in enumerate(keys):
            seen = sorted({_lookup(m, r, key) for r in rows}, key=lambda v: (str(type(v)), v))
            if len(seen) < 2:
                continue
            ref = (a if key[0] == "a" else b)[m.control[key[1]]]
            rest = keys[:n] + keys[n + 1:]
            if ref.type is Type.BOOL:
                return _where(ref, go([r for r in rows if _lookup(m, r, key)], rest),
                              go([r for r in rows if not _lookup(m, r, key)], rest))
            out = go([r for r in rows if _lookup(m, r, key) == seen[-1]], rest)
            for v in reversed(seen[:-1]):
                test = Expr(Op.EQ, Type.BOOL, (ref, const(v, ref.type)))
                out = _where(test, go([r for r in rows if _lookup(m, r, key) == v], rest), out)
            return out
        raise Failed("the data's combine is not a function of the control fields")

    best = None
    for order in (("a", "b"), ("b", "a")):
        keys = [(side, k) for side in order for k in range(len(m.control))]
        t = go(rows, keys)
        if best is None or _size(t) < _size(best):
            best = t
    return best
