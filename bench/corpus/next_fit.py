"""Next-fit bin packing: open a new bin when the item does not fit in the current one.

Source: Johnson, "Near-optimal bin packing algorithms", MIT 1973 (next fit); thm3 issue
21's honest limits: bin packing with next fit has no bounded lift."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    bins: Int = 0       # bins opened
    fill: Real = 1      # fill of the current bin (1: none open, so the first item opens one)


def left(acc: State, w: Real) -> State:
    assert w > 0 and w <= 1
    if acc.fill + w > 1:
        return State(acc.bins + 1, w)
    return State(acc.bins, acc.fill + w)
