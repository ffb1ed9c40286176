"""The first element equal to 7, with a flag (Int elements).

Source: PLDI 2021 regular-pattern loops (first match of a letter); issue 15's finding 2."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    has: Bool = False   # a 7 has been seen
    v: Int = 0          # the first 7 (0 while none)


def left(acc: State, x: Int) -> State:
    if not acc.has and x == 7:
        return State(True, x)
    return acc
