"""The two smallest elements (duplicates count twice).

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `second min`; also AutoLifter's `sndmin`."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m1: Real = inf  # smallest element so far
    m2: Real = inf  # second smallest


def left(acc: State, x: Real) -> State:
    m1 = min(acc.m1, x)
    m2 = min(acc.m2, max(acc.m1, x))
    return State(m1, m2)
