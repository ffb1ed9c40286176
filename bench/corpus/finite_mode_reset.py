"""A three-state mode machine with a reset: 2 resets to mode 0, 1 moves to the next mode.

Source: mode machines of embedded controllers (selection among constants); not a
homomorphism over the mode alone."""
from typing import NamedTuple
from thm3.lang import Int, where


class State(NamedTuple):
    m: Int = 0      # the mode: 0, 1 or 2


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1 or x == 2
    if x == 2:
        return State(0)
    if x == 1:
        return State(where(acc.m == 0, 1, where(acc.m == 1, 2, 0)))
    return State(acc.m)
