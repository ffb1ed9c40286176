"""Longest strictly increasing run with lead, trail, length, first and last fields.

Source: AutoLifter, benchmark `lis` with the lifting it finds; issue 14's run with
lead/trail/length fields."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    best: Int = 0       # longest run
    lead: Int = 0       # run at the start
    trail: Int = 0      # run at the end
    n: Int = 0          # length
    first: Real = 0     # first element (0 while empty)
    last: Real = 0      # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    if acc.n == 0:
        return State(1, 1, 1, 1, x, x)
    up = x > acc.last
    trail = acc.trail + 1 if up else 1
    lead = acc.lead + 1 if up and acc.lead == acc.n else acc.lead
    return State(max(acc.best, trail), lead, trail, acc.n + 1, acc.first, x)
