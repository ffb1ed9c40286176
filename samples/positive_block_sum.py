"""Largest sum of a maximal block of positive elements (0 when there is none)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    best: Real = 0      # largest sum of a block of positive elements so far
    cur: Real = 0       # sum of the block of positive elements at the end


def left(acc: State, x: Real) -> State:
    cur = acc.cur + x if x > 0 else 0
    return State(max(acc.best, cur), cur)


def result(acc: State) -> Real:
    return acc.best
