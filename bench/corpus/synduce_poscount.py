"""Number of positive elements.

Source: Synduce (PLDI 2022), benchmark `poscount`."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0      # positives so far


def left(acc: State, x: Real) -> State:
    if x > 0:
        return State(acc.c + 1)
    return acc
