"""Last element, with a flag that says whether there is one."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    has: Bool = False   # the list is not empty
    value: Real = 0     # its last element (0 while empty)


def left(acc: State, x: Real) -> State:
    return State(True, x)


def right(x: Real, acc: State) -> State:
    if acc.has:
        return acc
    else:
        return State(True, x)
