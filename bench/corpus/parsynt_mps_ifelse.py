"""Maximum prefix sum with an if/else instead of max().

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `mps`."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum so far
    m: Real = 0     # best prefix sum (the empty prefix counts)


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    if s > acc.m:
        return State(s, s)
    else:
        return State(s, acc.m)
