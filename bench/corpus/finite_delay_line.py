"""A two-stage delay line over bits: d1 is the last element, d2 the one before it.

Source: shift registers (a 2-bit history register, as branch predictors keep); the lift
needs only how many elements have come, up to 2: past two, the start's bits are gone."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    d1: Int = 0     # the last element (0 while empty)
    d2: Int = 0     # the element before it (0 while there is none)


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(x, acc.d1)
