"""Any negative: whether some element is < 0 (false for an empty list)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    found: Bool = False     # some element so far is negative


def left(acc: State, x: Real) -> State:
    return State(acc.found or x < 0)


def right(x: Real, acc: State) -> State:
    return State(x < 0 or acc.found)


def result(acc: State) -> Bool:
    return acc.found
