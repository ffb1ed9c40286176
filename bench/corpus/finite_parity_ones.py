"""Parity of the number of ones, as a flag toggled by each one.

Source: PLDI 2021 regular-pattern loops (even number of ones); Hillis and Steele 1986."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    odd: Bool = False       # an odd number of ones so far


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.odd != (x == 1))
