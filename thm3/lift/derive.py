"""The right fold a proved combine gives: right(e, acc) = combine(left(init, e), acc),
simplified, and the lifted loop that carries it."""
from __future__ import annotations

from dataclasses import replace

from thm3.ir import Expr, Fn, Loop, initial_state, substitute, var
from thm3.ir.simplify import simplify

DERIVED = "The right fold is derived from the proved combine: right(e, acc) = combine(left(init, e), acc)."


def derived_right(loop: Loop, combine: Fn) -> list[Expr]:
    """right(e, acc) = combine(left(init, e), acc), simplified: the right fold that a
    combine gives (over "acc.<field>", the element and the loop parameters)."""
    init = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))}
    single = substitute(loop.left.outputs, init)
    mapping = {f"a.{f.name}": e for f, e in zip(loop.fields, single)}
    mapping |= {f"b.{f.name}": var(f"acc.{f.name}", f.type) for f in loop.fields}
    finite = {d.name for d in loop.elements} | {d.name for d in loop.params}
    return [simplify(e, finite=finite) for e in substitute(combine.outputs, mapping)]


def with_right_fold(loop: Loop, combine: Fn) -> Loop:
    """The lifted loop with right(e, acc) = combine(left(init, e), acc), simplified."""
    right = Fn(loop.left.inputs, tuple(derived_right(loop, combine)))
    doc = (loop.doc + "\n" if loop.doc else "") + DERIVED
    return replace(loop, right=right, doc=doc)
