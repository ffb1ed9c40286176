"""The one lowering of the IR: a function's outputs as a flat list of steps, operands
before the steps that read them, each shared subterm once (a `where` stays a select).

The evaluator's schedule (`semantics/evaluate.Compiled`) and the printers that write the
IR as straight-line code read it from here (the Python fold, Numba's bodies, the emitted
NumPy module's temporaries, the CUDA printer's locals, the loop file's locals): the order
of the steps, which step reads which, and how many readers each has (a local is worth
its name where it has two).  A step's position is its
name's number in every printer (t7, c7), as the walk order was before."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, TypeVar

from thm3.ir import core                # as a module: `core` prints through this lowering
from thm3.ir.cache import Bounded

if TYPE_CHECKING:
    from thm3.ir.core import Expr

V = TypeVar("V")


@dataclass(frozen=True)
class Step:
    node: Expr
    args: tuple[int, ...]           # the steps of its operands, by position


@dataclass(frozen=True)
class Program:
    steps: tuple[Step, ...]         # every node once, operands first
    outputs: tuple[int, ...]        # the step of each output
    uses: tuple[int, ...]           # per step: how many operands and outputs read it

    def at(self, node: Expr) -> int:
        """The position of `node`'s step."""
        return next(k for k, s in enumerate(self.steps) if s.node is node)

    def run(self, entry: Callable[[int, Step, list], V],
            keep: Callable[[int, Step, V], V] | None = None,
            known: Mapping[Expr, V] | None = None) -> list[V]:
        """The one driver every printer runs: each step's value (its text, an operand, a
        name), in step order.  `entry(k, step, args)` is the target's table applied to
        the step's node and its operands' values; `keep(k, step, value)` may bind the
        value (a local: the target writes a line) and gives what the step's readers see
        in its place; a node in `known` (a local declared earlier, a text printed
        before) has that value and no entry.  The outputs' values are
        `values[k] for k in outputs`."""
        values: list = []
        for k, step in enumerate(self.steps):
            got = known.get(step.node) if known is not None else None
            if got is None:
                got = entry(k, step, [values[a] for a in step.args])
                if keep is not None:
                    got = keep(k, step, got)
            values.append(got)
        return values


_LOWERED = Bounded(256)         # outputs (a tuple of interned nodes) -> its Program


def lower(outputs, remember: bool = True, known: Mapping[Expr, object] | None = None) -> Program:
    """The program of `outputs` (remembered: a loop's step is lowered once for every
    printer).  With `known` (a printer's memo of what it printed), the walk stops at a
    known node: it is a step without operands, whose value `Program.run` takes from the
    memo; such a program is not remembered."""
    outputs = tuple(outputs)
    if known is None:
        got = _LOWERED.get(outputs) if remember else None
        if got is not None:
            return got
        order = core.walk(outputs)
        at = {e: k for k, e in enumerate(order)}
        steps = tuple(Step(e, tuple(at[s] for s in e.src)) for e in order)
    else:
        at, listed = {}, []

        def add(e, args):
            at[e] = len(listed)
            listed.append(Step(e, args))
        for e in core.walk(outputs, lambda n: known.get(n) is not None):
            for s in e.src:
                if s not in at:
                    add(s, ())
            add(e, tuple(at[s] for s in e.src))
        for o in outputs:
            if o not in at:
                add(o, ())
        steps = tuple(listed)
    uses = [0] * len(steps)
    for step in steps:
        for a in step.args:
            uses[a] += 1
    for o in outputs:
        uses[at[o]] += 1
    program = Program(steps, tuple(at[o] for o in outputs), tuple(uses))
    return _LOWERED.put(outputs, program) if remember and known is None else program
