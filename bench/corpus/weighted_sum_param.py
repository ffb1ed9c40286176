"""Weighted count and sum above a threshold (loop parameter).

Source: Synduce (PLDI 2022), the `sum of elements above a bound` family."""
from typing import NamedTuple
from thm3.lang import Int, Real

lo: Real        # the threshold


class State(NamedTuple):
    c: Int = 0      # elements above lo
    s: Real = 0     # their sum


def left(acc: State, x: Real) -> State:
    if x > lo:
        return State(acc.c + 1, acc.s + x)
    return acc
