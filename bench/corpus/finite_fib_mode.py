"""Two coupled counts whose recurrence (Fibonacci-like, or doubling) is chosen by a mode the element sets on each step.

Finite control (the last mode, read off the element) with a 2 x 2 affine (+, *) step.
Not a homomorphism; the copies lift holds the data from the other mode and the 2 x 2
composed matrix (7 fields); 5, where the copies that are relations of the others (the
other column of the slopes is (u, v) less the copies) are read as them.  Source: linear
recurrences with switched coefficients (Blelloch 1990, "Prefix sums and their
applications", the matrix form)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    fast: Bool = False
    u: Real = 1.0
    v: Real = 0.0


def left(acc: State, x: Real, go: Bool) -> State:
    if go:
        return State(True, acc.u + acc.v, acc.u + x)
    return State(False, 2.0 * acc.u, acc.v + x)
