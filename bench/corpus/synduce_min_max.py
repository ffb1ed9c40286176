"""Minimum and maximum, written with if statements.

Source: Synduce (PLDI 2022), benchmark `min_max`."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    lo: Real = inf      # smallest so far
    hi: Real = -inf     # largest so far


def left(acc: State, x: Real) -> State:
    lo = acc.lo
    hi = acc.hi
    if x < lo:
        lo = x
    if x > hi:
        hi = x
    return State(lo, hi)
