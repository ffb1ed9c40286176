"""Argmax: the largest element and the index of its first occurrence (-1 if empty)."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    best: Real = -inf   # largest element so far
    idx: Int = -1       # index of its first occurrence


def left(acc: State, x: Real, i: Index) -> State:
    # strictly greater: a tie keeps the earlier index
    if x > acc.best:
        return State(x, i)
    else:
        return acc


def right(x: Real, i: Index, acc: State) -> State:
    # the new element comes first, so it wins ties
    if x >= acc.best:
        return State(x, i)
    else:
        return acc
