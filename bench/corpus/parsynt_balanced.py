"""Balanced brackets over +1/-1 elements: depth and lowest depth.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `balanced parentheses`; Synduce's `bal`."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    d: Int = 0      # depth
    low: Int = 0    # lowest depth reached (0 counts)


def left(acc: State, x: Int) -> State:
    assert x == 1 or x == -1
    d = acc.d + x
    return State(d, min(acc.low, d))


def result(acc: State) -> Bool:
    return acc.d == 0 and acc.low >= 0
