"""Does the bit list match 0*1*? Lifted with a seen-zero flag.

Source: PLDI 2021 regular-pattern loops (`0*1*`), after lifting."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    one: Bool = False   # a one has been seen
    zero: Bool = False  # a zero has been seen
    ok: Bool = True     # matches 0*1* so far


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.one or x == 1, acc.zero or x == 0, acc.ok and not (acc.one and x == 0))
