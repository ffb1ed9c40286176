"""Best single trade (largest x_j - x_i with i <= j): not a homomorphism over (low, best).

Source: AutoLifter, benchmark `max distance` (stock trading)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    lo: Real = inf  # lowest so far
    best: Real = 0  # best gain (0: no trade)


def left(acc: State, x: Real) -> State:
    return State(min(acc.lo, x), max(acc.best, x - acc.lo))
