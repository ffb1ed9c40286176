"""Maximum prefix sum: the largest sum of a prefix (the empty prefix counts)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of the list so far
    m: Real = 0     # best prefix sum so far


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    return State(s, max(acc.m, s))


def right(x: Real, acc: State) -> State:
    return State(x + acc.s, max(0, x + acc.m))


def result(acc: State) -> Real:
    return acc.m
