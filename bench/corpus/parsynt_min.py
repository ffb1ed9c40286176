"""Minimum element.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `min`."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m: Real = inf   # smallest element so far


def left(acc: State, x: Real) -> State:
    return State(min(acc.m, x))


def right(x: Real, acc: State) -> State:
    return State(min(x, acc.m))
