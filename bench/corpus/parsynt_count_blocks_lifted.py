"""Number of blocks of ones, lifted with the first bit and an emptiness flag.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), `count 1's blocks` after lifting."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    c: Int = 0            # blocks so far
    prev: Bool = False    # the last bit was a one
    first: Bool = False   # the first bit was a one
    has: Bool = False     # the list is not empty


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    one = x == 1
    first = acc.first if acc.has else one
    return State(acc.c + 1 if one and not acc.prev else acc.c, one, first, True)
