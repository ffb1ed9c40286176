"""Number of positive elements with where() (twin of count_pos_ifexp).

Source: Synduce (PLDI 2022), benchmark `poscount`, spelled with where()."""
from typing import NamedTuple
from thm3.lang import Int, Real, where


class State(NamedTuple):
    c: Int = 0      # positives so far


def left(acc: State, x: Real) -> State:
    return State(acc.c + where(x > 0, 1, 0))
