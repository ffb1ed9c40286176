"""Best single trade, lifted with the highest element.

Source: AutoLifter, benchmark `max distance` with its lifting."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    lo: Real = inf      # lowest so far
    hi: Real = -inf     # highest so far
    best: Real = 0      # best gain


def left(acc: State, x: Real) -> State:
    return State(min(acc.lo, x), max(acc.hi, x), max(acc.best, x - acc.lo))
