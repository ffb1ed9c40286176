"""Since the last reset (a reading below -100): the peak, the total, and the lowest dip.

Source: issue 21, (max, +), (+, *) and (min, +) fields side by side, reset by one flag."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    reset: Bool = False
    peak: Real = -inf
    total: Real = 0.0
    dip: Real = inf


def left(acc: State, x: Real) -> State:
    if x < -100:
        return State(True, -inf, 0.0, inf)
    return State(acc.reset, max(acc.peak, x), acc.total + x, min(acc.dip, x))
