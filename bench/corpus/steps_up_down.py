"""Steps up and steps down in a series, each counted against its own copy of the last value.

Source: trend counting (up-ticks and down-ticks of a price series): two independent
groups, (last, ups) and (prev, downs), each needing the first element to join at the
split; the lift group by group adds it once, shared, not twice."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    last: Real = inf    # the previous value, for the ups
    ups: Int = 0        # steps up
    prev: Real = inf    # the previous value, for the downs
    downs: Int = 0      # steps down


def left(acc: State, x: Real) -> State:
    return State(x, acc.ups + 1 if x > acc.last else acc.ups, x, acc.downs + 1 if x < acc.prev else acc.downs)
