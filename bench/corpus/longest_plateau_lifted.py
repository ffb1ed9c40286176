"""Longest run of equal elements (a plateau) with lead, trail, length, first and last.

Source: AutoLifter (Ji et al.), the `lis` lifting applied to runs of equal elements
(the `longest plateau` exercise of Gries, The Science of Programming, 1981)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    best: Int = 0       # longest plateau
    lead: Int = 0       # plateau at the start
    trail: Int = 0      # plateau at the end
    n: Int = 0          # length
    first: Real = 0     # first element (0 while empty)
    last: Real = 0      # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    if acc.n == 0:
        return State(1, 1, 1, 1, x, x)
    same = x == acc.last
    trail = acc.trail + 1 if same else 1
    lead = acc.lead + 1 if same and acc.lead == acc.n else acc.lead
    return State(max(acc.best, trail), lead, trail, acc.n + 1, acc.first, x)
