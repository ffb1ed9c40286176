"""A level drained by nonnegative amounts, never below a floor: s = max(s - x, lo + 1).

Source: saturating counters (a leaky bucket drained to a floor), Morita et al., PLDI
2007's clipped sums mirrored; the laws need the range lo + 1 <= s <= 0."""
from typing import NamedTuple
from thm3.lang import Real

lo: Real        # one below the floor


class State(NamedTuple):
    s: Real = 0     # max(-sum, lo + 1)


def left(acc: State, x: Real) -> State:
    assert x >= 0
    assert lo <= -1
    return State(max(acc.s - x, lo + 1))
