"""Balanced-prefix check: depth and a flag that the depth never went below 0."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    depth: Int = 0      # nesting depth so far (opens minus closes)
    ok: Bool = True     # no prefix closed more than it opened


def left(acc: State, x: Int) -> State:
    assert x == 1 or x == -1
    depth = acc.depth + x
    return State(depth, acc.ok and depth >= 0)


def result(acc: State) -> Bool:
    return acc.ok and acc.depth == 0
