"""The five smallest elements, duplicates counted, by a min/max insertion network.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), benchmark `second min` written as
min/max, taken to k = 5 (the odd-even insertion step of a selection network)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m1: Real = inf  # smallest
    m2: Real = inf
    m3: Real = inf
    m4: Real = inf
    m5: Real = inf  # fifth smallest


def left(acc: State, x: Real) -> State:
    m1 = min(acc.m1, x)
    m2 = min(acc.m2, max(acc.m1, x))
    m3 = min(acc.m3, max(acc.m2, x))
    m4 = min(acc.m4, max(acc.m3, x))
    m5 = min(acc.m5, max(acc.m4, x))
    return State(m1, m2, m3, m4, m5)
