"""Sum: the sum of a list of reals."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of the elements so far


def left(acc: State, x: Real) -> State:
    return State(acc.s + x)


def right(x: Real, acc: State) -> State:
    return State(x + acc.s)


def result(acc: State) -> Real:
    return acc.s
