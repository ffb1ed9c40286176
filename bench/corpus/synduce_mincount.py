"""Minimum with the number of its occurrences.

Source: Synduce (PLDI 2022), benchmark `mincount`."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m: Real = inf   # smallest so far
    c: Int = 0      # its occurrences


def left(acc: State, x: Real) -> State:
    if x < acc.m:
        return State(x, 1)
    elif x == acc.m:
        return State(acc.m, acc.c + 1)
    else:
        return acc
