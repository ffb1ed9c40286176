"""Number of positive elements with a conditional expression (twin of count_pos_where).

Source: Synduce (PLDI 2022), benchmark `poscount`, spelled with `a if c else b`."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0      # positives so far


def left(acc: State, x: Real) -> State:
    return State(acc.c + (1 if x > 0 else 0))
