"""The eight largest elements, duplicates counted, by a max/min insertion network.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), benchmark `second min` written as
max/min and taken to k = 8 (the insertion step of a selection network, as a GPU top-k
keeps its per-thread registers)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m1: Real = -inf     # largest
    m2: Real = -inf
    m3: Real = -inf
    m4: Real = -inf
    m5: Real = -inf
    m6: Real = -inf
    m7: Real = -inf
    m8: Real = -inf     # eighth largest


def left(acc: State, x: Real) -> State:
    m1 = max(acc.m1, x)
    m2 = max(acc.m2, min(acc.m1, x))
    m3 = max(acc.m3, min(acc.m2, x))
    m4 = max(acc.m4, min(acc.m3, x))
    m5 = max(acc.m5, min(acc.m4, x))
    m6 = max(acc.m6, min(acc.m5, x))
    m7 = max(acc.m7, min(acc.m6, x))
    m8 = max(acc.m8, min(acc.m7, x))
    return State(m1, m2, m3, m4, m5, m6, m7, m8)
