"""Lowest latency seen while the link is hot: hot after 2 slow samples (> 50) in a row, cold at a fast one.

Source: issue 21, a (min, +) field gated by a saturating streak counter."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    slow: Int = 0
    best: Real = inf


def left(acc: State, x: Real) -> State:
    slow = min(acc.slow + 1, 2) if x > 50 else 0
    best = min(acc.best, x) if acc.slow == 2 else acc.best
    return State(slow, best)
