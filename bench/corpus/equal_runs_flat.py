"""Runs of equal elements, seven fields: the first and last elements, the leading and
trailing runs, the length, the longest run, and whether all elements are equal.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), `longest equal run` (a plateau), with
AutoLifter's lead/trail lifting and the all-equal flag of Synduce's `is constant`."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    first: Real = 0     # first element (0 while empty)
    last: Real = 0      # last element (0 while empty)
    lead: Int = 0       # run of equal elements at the start
    trail: Int = 0      # run of equal elements at the end
    n: Int = 0          # length
    best: Int = 0       # longest run of equal elements
    flat: Bool = True   # all elements equal


def left(acc: State, x: Real) -> State:
    if acc.n == 0:
        return State(x, x, 1, 1, 1, 1, True)
    same = x == acc.last
    trail = acc.trail + 1 if same else 1
    lead = acc.lead + 1 if same and acc.flat else acc.lead
    return State(acc.first, x, lead, trail, acc.n + 1, max(acc.best, trail), acc.flat and same)
