"""Does the bit list end with a one? Not a homomorphism: [] and [0] look alike.

Source: PLDI 2021 regular-pattern loops (`.*1`)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    e: Bool = False     # the last bit is a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(x == 1)
