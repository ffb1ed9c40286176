"""Harmonic mean kept as itself with the count: combines through the reciprocals, n / h adding up.

Source: the harmonic mean of positive rates (parallel resistors, average speeds); issue 21's
"combines through reciprocals" class."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # number of elements
    h: Real = 0     # their harmonic mean (0 while empty)


def left(acc: State, x: Real) -> State:
    assert x > 0
    if acc.n == 0:
        return State(1, x)
    return State(acc.n + 1, (acc.n + 1) / (acc.n / acc.h + 1 / x))
