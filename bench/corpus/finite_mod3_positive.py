"""The number of positive elements modulo 3.

Source: Parsynt-style counter of a predicate, kept modulo 3 (a cyclic automaton)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0      # (number of x > 0) % 3


def left(acc: State, x: Real) -> State:
    return State((acc.c + 1) % 3 if x > 0 else acc.c)
