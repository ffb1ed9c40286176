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

from thm3.ir.cache import Bounded
from thm3.ir.core import Expr, walk


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


_LOWERED = Bounded(256)         # outputs (a tuple of interned nodes) -> its Program


def lower(outputs) -> Program:
    """The program of `outputs` (remembered: a loop's step is lowered once for every
    printer)."""
    outputs = tuple(outputs)
    got = _LOWERED.get(outputs)
    if got is not None:
        return got
    order = walk(outputs)
    at = {e: k for k, e in enumerate(order)}
    steps = tuple(Step(e, tuple(at[s] for s in e.src)) for e in order)
    uses = [0] * len(steps)
    for step in steps:
        for a in step.args:
            uses[a] += 1
    for o in outputs:
        uses[at[o]] += 1
    return _LOWERED.put(outputs, Program(steps, tuple(at[o] for o in outputs), tuple(uses)))
