"""Balanced brackets: +1 opens, -1 closes; balanced iff depth ends at 0 and never dips below."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    depth: Int = 0      # final nesting depth (opens minus closes)
    mindepth: Int = 0   # smallest depth of any prefix (the empty prefix counts)


def left(acc: State, x: Int) -> State:
    assert x == 1 or x == -1
    depth = acc.depth + x
    return State(depth, min(acc.mindepth, depth))


def right(x: Int, acc: State) -> State:
    return State(x + acc.depth, min(0, x + acc.mindepth))


def result(acc: State) -> Bool:
    return acc.depth == 0 and acc.mindepth >= 0
