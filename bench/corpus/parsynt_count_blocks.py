"""Number of blocks of ones, with the previous bit: not a homomorphism over this state.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `count 1's blocks`."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    c: Int = 0          # blocks so far
    prev: Bool = False  # the last bit was a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    one = x == 1
    return State(acc.c + 1 if one and not acc.prev else acc.c, one)
