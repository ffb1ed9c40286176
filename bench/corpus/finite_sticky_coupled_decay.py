"""Two coupled leaky integrators (+, *) that stop once a sticky end element arrives.

Finite control (a sticky end flag) with a 2 x 2 affine step.  Not a homomorphism; the
copies lift holds the composed matrix's column for y (2 fields): the column for z is 0
since z starts at 0 and reads no element.  Source: coupled first-order IIR filters in
state-space form, gated by an end-of-stream marker."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    done: Bool = False
    y: Real = 0.0
    z: Real = 0.0


def left(acc: State, x: Real, end: Bool) -> State:
    if acc.done:
        return acc
    return State(end, 0.5 * acc.y + 0.25 * acc.z + x, 0.25 * acc.y + 0.5 * acc.z)
