"""The one table of monoids (in the manner of Halide's AssociativeOpsTable): which IR
operations are associative with a unit, over which value types, with what identity,
whether they commute and are idempotent, and their scan primitive.

Scans (`backends/scan`), transport of structure, the sketch's folds, the simplifier's
units and the lifting candidates read it here; none keeps its own list.

`commutative` is bit for bit in IEEE arithmetic: max and min are not (a tie of 0.0 and
-0.0 gives the second operand, so `max(a, b)` and `max(b, a)` may differ in the sign of a
zero), though they commute over the reals of the proofs."""
from __future__ import annotations

import math
from dataclasses import dataclass

from thm3.ir.core import Expr
from thm3.ir.ops import Op, Type


@dataclass(frozen=True)
class Monoid:
    op: Op
    symbol: str                 # how a transport of structure names it
    types: tuple[Type, ...]     # the value types it is a monoid over (Vec: elementwise)
    identity: object            # its unit: a float for the numbers (an Int field's is its int), a bool
    commutative: bool           # bit for bit in IEEE arithmetic
    idempotent: bool            # op(x, x) == x
    ufunc: str                  # NumPy's ufunc: its `accumulate` is the scan primitive


_NUMBERS = (Type.REAL, Type.INT, Type.VEC)

# In the order the searches try them: sums first.
MONOIDS: tuple[Monoid, ...] = (
    Monoid(Op.ADD, "+", _NUMBERS, 0.0, True, False, "add"),
    Monoid(Op.MAX, "max", _NUMBERS, -math.inf, False, True, "maximum"),
    Monoid(Op.MIN, "min", _NUMBERS, math.inf, False, True, "minimum"),
    Monoid(Op.MUL, "×", (Type.REAL, Type.INT), 1.0, True, False, "multiply"),
    Monoid(Op.OR, "or", (Type.BOOL,), False, True, True, "logical_or"),
    Monoid(Op.AND, "and", (Type.BOOL,), True, True, True, "logical_and"),
)

BY_OP: dict[Op, Monoid] = {m.op: m for m in MONOIDS}


def monoid(op: Op) -> Monoid | None:
    return BY_OP.get(op)


def monoids_over(type_: Type) -> tuple[Op, ...]:
    """The operations that are monoids over values of `type_`, in the table's order."""
    return tuple(m.op for m in MONOIDS if type_ in m.types)


def is_unit(op: Op, e: Expr) -> bool:
    """`e` is the constant unit of `op` (a number for the numbers' monoids, never a Bool
    standing for one)."""
    m = BY_OP.get(op)
    if m is None or e.op is not Op.CONST:
        return False
    if isinstance(m.identity, bool):
        return e.type is Type.BOOL and e.arg is m.identity
    return not isinstance(e.arg, bool) and e.arg == m.identity
