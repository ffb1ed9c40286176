"""Longest block of ones: not a homomorphism over (best, current run).

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `max length of 1's block`; Synduce's `mbo`."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    best: Int = 0   # longest block so far
    cur: Int = 0    # current run of ones at the end


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if x == 1:
        return State(max(acc.best, acc.cur + 1), acc.cur + 1)
    else:
        return State(acc.best, 0)
