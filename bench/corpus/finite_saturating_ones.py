"""A saturating counter of ones, capped at 3.

Source: saturating counters (branch predictors' 2-bit counters, capped at a constant)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    n: Int = 0      # min(number of ones, 3)


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(min(acc.n + 1, 3) if x == 1 else acc.n)
