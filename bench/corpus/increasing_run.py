"""Longest strictly increasing run, with lead run, trail run, length, first and last."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    best: Int = 0    # longest increasing run
    lead: Int = 0    # increasing run at the start
    trail: Int = 0   # increasing run at the end
    n: Int = 0       # length
    first: Real = inf
    last: Real = -inf


def left(acc: State, x: Real) -> State:
    trail = acc.trail + 1 if x > acc.last else 1
    lead = acc.lead + 1 if acc.lead == acc.n and x > acc.last else acc.lead
    first = x if acc.n == 0 else acc.first
    return State(max(acc.best, trail), lead, trail, acc.n + 1, first, x)
