"""Maximum with its count over Int elements.

Source: issue 14 (max with count: proved over Real, "unknown" over Int)."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m: Real = -inf  # largest so far
    c: Int = 0      # its occurrences


def left(acc: State, x: Int) -> State:
    if x > acc.m:
        return State(x, 1)
    elif x == acc.m:
        return State(acc.m, acc.c + 1)
    else:
        return acc
