"""The right fold a proved combine gives: right(e, acc) = combine(left(init, e), acc),
simplified, and the lifted loop that carries it."""
from __future__ import annotations

from dataclasses import replace

from thm3.ir import Expr, Fn, Loop, Op, initial_state, substitute, var
from thm3.ir.simplify import simplify

DERIVED = "The right fold is derived from the proved combine: right(e, acc) = combine(left(init, e), acc)."


def finite_fields(invariants) -> set[str]:
    """"acc.<f>" for the fields the invariants keep finite (f > -inf and f < inf)."""
    lower, upper = set(), set()
    for inv in invariants:
        if inv.op in (Op.GT, Op.LT) and inv.src[0].op is Op.VAR and inv.src[1].op is Op.CONST:
            v = inv.src[1].arg
            if inv.op is Op.GT and v == float("-inf"):
                lower.add(inv.src[0].arg)
            if inv.op is Op.LT and v == float("inf"):
                upper.add(inv.src[0].arg)
    return lower & upper


def derived_right(loop: Loop, combine: Fn, invariants=()) -> list[Expr]:
    """right(e, acc) = combine(left(init, e), acc), simplified: the right fold that a
    combine gives (over "acc.<field>", the element and the loop parameters).  Fields the
    invariants keep finite simplify like elements do (0 * acc.m is 0)."""
    init = {f"acc.{f.name}": e for f, e in zip(loop.fields, initial_state(loop))}
    single = substitute(loop.left.outputs, init)
    mapping = {f"a.{f.name}": e for f, e in zip(loop.fields, single)}
    mapping |= {f"b.{f.name}": var(f"acc.{f.name}", f.type) for f in loop.fields}
    finite = {d.name for d in loop.elements} | {d.name for d in loop.params} | finite_fields(invariants)
    return [simplify(e, finite=finite) for e in substitute(combine.outputs, mapping)]


def with_right_fold(loop: Loop, combine: Fn, invariants=()) -> Loop:
    """The lifted loop with right(e, acc) = combine(left(init, e), acc), simplified."""
    right = Fn(loop.left.inputs, tuple(derived_right(loop, combine, invariants)))
    doc = (loop.doc + "\n" if loop.doc else "") + DERIVED
    return replace(loop, right=right, doc=doc)
