"""Euclidean norm: the square root of the sum of squares."""
from typing import NamedTuple
from thm3.lang import Real, sqrt


class State(NamedTuple):
    ss: Real = 0    # sum of squares so far


def left(acc: State, x: Real) -> State:
    return State(acc.ss + x * x)


def right(x: Real, acc: State) -> State:
    return State(x * x + acc.ss)


def result(acc: State) -> Real:
    return sqrt(acc.ss)
