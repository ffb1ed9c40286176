"""Not a homomorphism: a held value that flips sign each step, max(-0.5 * v, x).

The coefficient -0.5 is negative, so scaling does not distribute over max: [0] and [-1]
both end at (0, 1), but after [1] first they end at 0 and at -0.5 (max(-0.5, 0) against
max(-0.5, -1)).  Source: a counterexample to (max, *) with a negative coefficient."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    peak: Real = 0.0
    ticks: Int = 0


def left(acc: State, x: Real) -> State:
    return State(max(acc.peak * -0.5, x), acc.ticks + 1)
