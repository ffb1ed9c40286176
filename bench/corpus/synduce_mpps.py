"""Maximum prefix sum with the position where it ends (the earliest on ties).

Source: Farzan, Lette & Nicolet, "Recursion synthesis with unrealizability witnesses",
PLDI 2022 (Synduce), benchmark `mpps` (max prefix sum position)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    s: Real = 0     # total
    m: Real = 0     # best prefix sum (the empty prefix counts)
    pos: Int = 0    # length of the best prefix
    n: Int = 0      # length


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    n = acc.n + 1
    if s > acc.m:
        return State(s, s, n, n)
    else:
        return State(s, acc.m, acc.pos, n)
