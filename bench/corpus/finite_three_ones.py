"""At least three ones seen: a flag read off a count capped at 3.

Source: saturating counters (a capped length, then a threshold on it)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    n: Int = 0              # min(number of ones, 3)
    enough: Bool = False    # n >= 3


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    n = min(acc.n + 1, 3) if x == 1 else acc.n
    return State(n, n >= 3)
