"""Product: the product of a list of reals (1 for an empty list)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    p: Real = 1     # product of the elements so far


def left(acc: State, x: Real) -> State:
    return State(acc.p * x)


def right(x: Real, acc: State) -> State:
    return State(x * acc.p)


def result(acc: State) -> Real:
    return acc.p
