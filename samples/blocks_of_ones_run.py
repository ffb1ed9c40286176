"""Blocks of ones, counted with the length of the run of ones at the end instead of the last bit."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    count: Int = 0      # runs of ones started so far
    cur: Int = 0        # length of the run of ones at the end


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    count = acc.count + 1 if x == 1 and acc.cur == 0 else acc.count
    return State(count, acc.cur + 1 if x == 1 else 0)


def result(acc: State) -> Int:
    return acc.count
