"""The finite-state route's shared vocabulary (`thm3.synth.finite`): the step read as a
machine (`Machine`) and the `Failed` that says why a loop is not one, the fields a lift
adds (`Added`) and the loop with them, the data's semiring groups, and one element a cell
of the element domain (its value, or a Z3 model), for the walks and the witnesses."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from thm3.ir import Expr, Fn, Loop, Type
from thm3.semantics.z3_plain import to_z3
from thm3.errors import Thm3Error


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


def show_state(m: Machine, s: tuple) -> str:
    return "(" + ", ".join(f"{n}={v}" for n, v in zip(m.names(m.control), s)) + ")"


def first_diff(f, g) -> int:
    return next(i for i, (x, y) in enumerate(zip(f, g)) if x != y)


def plain_value(v, type_: Type):
    v = np.asarray(v).item() if not isinstance(v, (bool, int, float)) else v
    if type_ is Type.BOOL:
        return bool(v)
    if type_ is Type.INT:
        return int(v)
    return float(v)


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


def groups_or_none(m: Machine) -> dict | None:
    """`tropical.groups`, None where the data is in no semiring (or there is none)."""
    from thm3.synth import tropical
    try:
        return tropical.groups(m) if m.data else None
    except Failed:
        return None
