"""Occurrences of the factor 01, lifted with the first bit.

Source: PLDI 2021 regular-pattern loops, after lifting."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    c: Int = 0          # occurrences of 0 followed by 1
    prev: Int = -1      # last bit (-1 while empty)
    first: Int = -1     # first bit (-1 while empty)


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    first = x if acc.first == -1 else acc.first
    return State(acc.c + 1 if acc.prev == 0 and x == 1 else acc.c, x, first)
