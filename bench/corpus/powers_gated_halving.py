"""Gated halving: a positive element halves the running value before it is added, and is
counted; the other elements pass.  The combine is v = 0.5 ** k2 v1 + v2: the decay over
b's list is a power of b's count of positive elements.

Source: a leaky accumulator that leaks only on events (spike-driven decay in an
event-based sensor's pixel), written as a loop over (time-ordered) events."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    k: Int = 0      # positive elements so far
    v: Real = 0     # the accumulator


def left(acc: State, x: Real) -> State:
    if x > 0:
        return State(acc.k + 1, 0.5 * acc.v + x)
    return acc
