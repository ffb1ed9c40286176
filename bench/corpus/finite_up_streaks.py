"""Longest streak of healthy probes (x > 0), with the leading and trailing streaks and whether all were healthy.

Source: issue 21, the longest run of ones (Parsynt's mbo family) over (max, +) beside a (+, *) count, under an all-ones flag: a's trailing streak meets b's leading one, which is the slope of b's trailing streak only where it is not 0."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    all_up: Bool = True
    lead: Int = 0
    trail: Int = 0
    best: Int = 0


def left(acc: State, x: Real) -> State:
    up = x > 0
    trail = acc.trail + 1 if up else 0
    return State(acc.all_up and up, acc.lead + 1 if acc.all_up and up else acc.lead, trail, max(acc.best, trail))
