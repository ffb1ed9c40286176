"""Zero after one: whether some 0 comes after a 1 in a list of bits."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    seen_one: Bool = False  # a 1 occurred so far
    found: Bool = False     # a 0 occurred after a 1


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.seen_one or x == 1, acc.found or (acc.seen_one and x == 0))


def result(acc: State) -> Bool:
    return acc.found
