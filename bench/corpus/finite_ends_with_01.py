"""Ends with the factor 01: two flags, not a homomorphism over them.

Source: PLDI 2021 regular-pattern loops (`.*01`)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    zero: Bool = False      # the last bit is a zero
    ends: Bool = False      # the list ends with 0 1


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(x == 0, acc.zero and x == 1)
