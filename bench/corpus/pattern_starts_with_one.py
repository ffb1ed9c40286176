"""Does the bit list start with a one?

Source: PLDI 2021 regular-pattern loops (`1.*`)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    has: Bool = False   # the list is not empty
    s: Bool = False     # the first bit is a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if acc.has:
        return acc
    return State(True, x == 1)
