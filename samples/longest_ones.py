"""Longest run of ones in a list of bits."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    best: Int = 0   # longest run of ones so far
    cur: Int = 0    # length of the run of ones at the end


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    cur = acc.cur + 1 if x == 1 else 0
    return State(max(acc.best, cur), cur)


def result(acc: State) -> Int:
    return acc.best
