"""Blocks of ones: the number of maximal runs of ones in a list of bits."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    count: Int = 0      # runs of ones started so far
    prev: Bool = False  # the last bit was a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    starts = x == 1 and not acc.prev
    return State(acc.count + 1 if starts else acc.count, x == 1)


def result(acc: State) -> Int:
    return acc.count
