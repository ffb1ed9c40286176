"""Count of the elements within 1 below the running maximum: over Int.

Source: the max-with-count of Synduce (PLDI 2022, `mincount`) written with the
integer trick `x > m - 1` for `x >= m`: the same text is a homomorphism over Int and
not over Real (thm3 issue 21, "Int against Real")."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    m: Int = -1      # the running maximum (-1 while empty)
    c: Int = 0      # elements seen within 1 below m since m was set


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if x > acc.m:
        return State(x, 1)
    elif x > acc.m - 1:
        return State(acc.m, acc.c + 1)
    else:
        return acc
