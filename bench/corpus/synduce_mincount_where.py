"""Minimum with its count, written with where() (the branch-form twin of synduce_mincount).

Source: Synduce (PLDI 2022), benchmark `mincount`, spelled without statements."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf, where


class State(NamedTuple):
    m: Real = inf   # smallest so far
    c: Int = 0      # its occurrences


def left(acc: State, x: Real) -> State:
    return State(min(acc.m, x), where(x < acc.m, 1, where(x == acc.m, acc.c + 1, acc.c)))
