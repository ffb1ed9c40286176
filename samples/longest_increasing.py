"""Longest strictly increasing run: the most consecutive elements, each larger than the one before."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    best: Int = 0       # longest strictly increasing run so far
    cur: Int = 0        # length of the strictly increasing run at the end
    last: Real = -inf   # the last element (-inf while empty)


def left(acc: State, x: Real) -> State:
    cur = acc.cur + 1 if x > acc.last else 1
    return State(max(acc.best, cur), cur, x)


def result(acc: State) -> Int:
    return acc.best
