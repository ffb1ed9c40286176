"""Sum of the elements.

Source: Farzan & Nicolet, "Synthesis of divide and conquer parallelism for loops",
PLDI 2017 (Parsynt), benchmark `sum`."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum so far


def left(acc: State, x: Real) -> State:
    return State(acc.s + x)


def right(x: Real, acc: State) -> State:
    return State(x + acc.s)
