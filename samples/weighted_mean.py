"""Weighted mean: sum of w * x over sum of w, for positive weights."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    sw: Real = 0    # sum of weights
    swx: Real = 0   # sum of weight * value


def left(acc: State, x: Real, w: Real) -> State:
    assert w > 0
    return State(acc.sw + w, acc.swx + w * x)


def right(x: Real, w: Real, acc: State) -> State:
    return State(w + acc.sw, w * x + acc.swx)


def result(acc: State) -> Real:
    return acc.swx / acc.sw if acc.sw > 0 else 0.0
