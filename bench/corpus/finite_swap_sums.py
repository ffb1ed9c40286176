"""Two sums that swap roles at each negative element: a weighted automaton with two states.

Source: AutoLifter's region sums (finite control with linear data): the sums of the
elements read in state 0 and in state 1, the state toggled by each negative element."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    flip: Bool = False      # an odd number of negative elements so far
    p: Real = 0             # sum of the elements read while not flipped
    n: Real = 0             # sum of the elements read while flipped


def left(acc: State, x: Real) -> State:
    flip = acc.flip != (x < 0)
    return State(flip, acc.p if flip else acc.p + x, acc.n + x if flip else acc.n)
