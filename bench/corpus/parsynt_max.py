"""Maximum element, written with if/else.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `max`."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m: Real = -inf  # largest element so far


def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x)
    else:
        return acc
