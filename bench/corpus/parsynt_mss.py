"""Maximum segment sum with the lifted fields (total, best prefix, best tail).

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `mss`; Morita et al. PLDI 2007, sec. 2."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m: Real = 0     # best segment sum
    p: Real = 0     # best prefix sum
    t: Real = 0     # best tail sum
    s: Real = 0     # total


def left(acc: State, x: Real) -> State:
    t = max(acc.t + x, 0)
    s = acc.s + x
    return State(max(acc.m, t), max(acc.p, s), t, s)
