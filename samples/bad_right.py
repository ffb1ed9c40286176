"""Maximum prefix sum with a wrong right fold: the right step forgets the empty prefix."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of the list so far
    m: Real = 0     # best prefix sum so far


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    return State(s, max(acc.m, s))


def right(x: Real, acc: State) -> State:
    # deliberately wrong: should be max(0, x + acc.m); differs on [-1]
    return State(x + acc.s, x + acc.m)


def result(acc: State) -> Real:
    return acc.m
