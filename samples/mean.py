"""Running mean: the arithmetic mean, updated incrementally (0 for an empty list)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # number of elements seen
    mean: Real = 0  # mean of the elements seen


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    return State(n, acc.mean + (x - acc.mean) / n)


def right(x: Real, acc: State) -> State:
    # the mean does not depend on the order, so prepending updates it the same way
    n = 1 + acc.n
    return State(n, acc.mean + (x - acc.mean) / n)


def result(acc: State) -> Real:
    return acc.mean
