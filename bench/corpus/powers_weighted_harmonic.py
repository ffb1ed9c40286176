"""Weighted harmonic mean of positive rates x with weights w, kept as itself with the
total weight (the average speed over legs of lengths w driven at speeds x).

Source: the weighted harmonic mean (price indices, average speeds); issue 21's "combines
through reciprocals" class: the weight w and w / h add up."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    w: Real = 0     # the total weight
    h: Real = 0     # the weighted harmonic mean (0 while empty)


def left(acc: State, x: Real, w: Real) -> State:
    assert x > 0
    assert w > 0
    if acc.w == 0:
        return State(w, x)
    return State(acc.w + w, (acc.w + w) / (acc.w / acc.h + w / x))
