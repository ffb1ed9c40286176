"""Maximum: the largest element (-inf for an empty list)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m: Real = -inf  # largest element so far


def left(acc: State, x: Real) -> State:
    return State(max(acc.m, x))


def right(x: Real, acc: State) -> State:
    return State(max(x, acc.m))


def result(acc: State) -> Real:
    return acc.m
