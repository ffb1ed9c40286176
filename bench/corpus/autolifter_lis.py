"""Longest strictly increasing run: not a homomorphism over (best, current, last).

Source: Ji, Xiong, Hu et al., "Superfast divide-and-conquer via AutoLifter" (AutoLifter),
benchmark `lis` (longest increasing segment)."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    best: Int = 0       # longest run so far
    cur: Int = 0        # run at the end
    last: Real = -inf   # last element


def left(acc: State, x: Real) -> State:
    cur = acc.cur + 1 if x > acc.last else 1
    return State(max(acc.best, cur), cur, x)
