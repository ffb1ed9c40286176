"""No two adjacent ones: not a homomorphism without the first bit.

Source: PLDI 2021 regular-pattern loops (`(0|10)*(1|)`)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    ok: Bool = True     # no factor 11 so far
    one: Bool = False   # the last bit is a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.ok and not (acc.one and x == 1), x == 1)
