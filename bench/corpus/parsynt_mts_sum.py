"""Maximum tail sum lifted with the total.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `mts` after lifting."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    t: Real = 0     # best suffix sum
    s: Real = 0     # total


def left(acc: State, x: Real) -> State:
    return State(max(acc.t + x, 0), acc.s + x)
