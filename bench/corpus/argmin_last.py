"""Minimum and the index of its last occurrence.

Source: NumPy's argmin family (Parsynt's `min` with a position)."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    m: Real = inf   # smallest so far
    i: Int = -1     # index of its last occurrence


def left(acc: State, x: Real, i: Index) -> State:
    if x <= acc.m:
        return State(x, i)
    return acc
