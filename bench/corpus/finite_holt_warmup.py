"""Holt's double exponential smoothing (a level and a trend) after a three-phase warm-up.

Source: Holt's linear trend method as streaming forecasters start it: the first element
sets the level, the second the trend, then the smoothing runs with weights alpha and beta.
Finite control (the phase) with data affine in themselves and parameter coefficients.  Its
composition lift copies the level and the trend from the two later phases and the slopes
from each (11 fields; 9 where four slopes are read as sums of the others); the lifted
combine reads a copy that equals a slope on every reachable state (both are 0 once the warm-up is over), so its step law is proved with the
facts of the data at reachable control states (at phase 1 the trend is 0)."""
from typing import NamedTuple
from thm3.lang import Int, Real

alpha: Real
beta: Real


class State(NamedTuple):
    phase: Int = 0
    level: Real = 0
    trend: Real = 0


def left(acc: State, x: Real) -> State:
    if acc.phase == 0:
        return State(1, x, 0.0)
    if acc.phase == 1:
        return State(2, x, x - acc.level)
    level = alpha * x + (1 - alpha) * (acc.level + acc.trend)
    trend = beta * (level - acc.level) + (1 - beta) * acc.trend
    return State(2, level, trend)
