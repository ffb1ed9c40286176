"""The cheapest price, inflated by 10% in busy periods only, with the busy periods counted.

(min, *) with a coefficient that selects on the element (1.1 in a busy period, 1
otherwise): the product over b's list is 1.1 ** (b's busy periods), which b counts.
Source: surge pricing."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    cost: Real = inf
    busy: Int = 0


def left(acc: State, busy: Int, x: Real) -> State:
    assert 0 <= busy <= 1
    if busy == 1:
        return State(min(acc.cost * 1.1, x), acc.busy + 1)
    return State(min(acc.cost, x), acc.busy)
