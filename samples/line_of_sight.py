"""Line of sight: whether the last element is strictly higher than every one before it."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    best: Real = -inf       # highest element so far (-inf only for an empty list)
    visible: Bool = False   # the last element is higher than all before it


def left(acc: State, x: Real) -> State:
    return State(max(acc.best, x), x > acc.best)


def right(x: Real, acc: State) -> State:
    # when the last element is visible it is the maximum, so best stands for it;
    # an empty rest makes x the last element, visible
    return State(max(x, acc.best), acc.best == -inf or (acc.visible and acc.best > x))
