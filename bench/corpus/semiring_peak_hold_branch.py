"""A peak hold written with if/else and a division, beside a running total.

The branch is max(peak / 2, x), so (max, *) on the peak; the total is a sum and the
ticks a count.  Source: a meter's firmware, as written."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    peak: Real = 0.0
    ticks: Int = 0
    total: Real = 0.0


def left(acc: State, x: Real) -> State:
    held = acc.peak / 2
    if held > x:
        return State(held, acc.ticks + 1, acc.total + x)
    return State(x, acc.ticks + 1, acc.total + x)
