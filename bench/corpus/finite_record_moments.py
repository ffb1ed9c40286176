"""The sum and the sum of squares of the values recorded between a start and a stop marker.

Source: finite control with linear data (AutoLifter's region sums, PLDI 2021): a start
(x > 100) and a stop (x < -100) switch recording; both moments b adds from "recording"
and whether b ends recording from there are the fields to add (3)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    rec: Bool = False
    s: Real = 0
    q: Real = 0


def left(acc: State, x: Real) -> State:
    if x > 100:
        return State(True, acc.s, acc.q)
    if x < -100:
        return State(False, acc.s, acc.q)
    if acc.rec:
        return State(True, acc.s + x, acc.q + x * x)
    return State(False, acc.s, acc.q)
