"""Does the bit list match 0*1*? Not a homomorphism without a seen-zero flag.

Source: Farzan & Nicolet, "Phased synthesis of divide and conquer programs", PLDI 2021,
the regular-pattern loops (`0*1*`)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    one: Bool = False   # a one has been seen
    ok: Bool = True     # matches 0*1* so far


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.one or x == 1, acc.ok and not (acc.one and x == 0))
