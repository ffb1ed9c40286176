"""Length of the list.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `length`."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # number of elements so far


def left(acc: State, x: Real) -> State:
    return State(acc.n + 1)
