"""Range: the largest minus the smallest element."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    hi: Real = -inf     # largest element so far
    lo: Real = inf      # smallest element so far


def left(acc: State, x: Real) -> State:
    return State(max(acc.hi, x), min(acc.lo, x))


def result(acc: State) -> Real:
    return acc.hi - acc.lo
