"""A flag set from the elements after a warm-up of three: f = (x == 1) once three elements have passed.

Source: saturating counters that gate a step (a predictor's warm-up); the count is kept
capped at 3 and read by the step; the lift needs whether the last element is a one."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    c: Int = 0          # elements so far, capped at 3
    f: Bool = False     # the last element is a one, once three came before it


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(min(acc.c + 1, 3), x == 1 if acc.c >= 3 else acc.f)
