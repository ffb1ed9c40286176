"""Average, kept as a sum and a count.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `average`."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    s: Real = 0     # sum so far
    n: Int = 0      # count so far


def left(acc: State, x: Real) -> State:
    return State(acc.s + x, acc.n + 1)


def result(acc: State) -> Real:
    return acc.s / acc.n if acc.n > 0 else 0
