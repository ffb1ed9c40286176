"""Dot product of two equally long lists of reals."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of x * y so far


def left(acc: State, x: Real, y: Real) -> State:
    return State(acc.s + x * y)


def result(acc: State) -> Real:
    return acc.s
