"""Three accumulators used in turn: each negative element moves to the next one.

Source: round-robin accumulators (finite control with linear data: a three-state
weighted automaton, one sum a state), after AutoLifter's region sums."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    m: Int = 0              # the accumulator in use: 0, 1 or 2
    s0: Real = 0            # sum of the elements read while m == 0
    s1: Real = 0            # sum of the elements read while m == 1
    s2: Real = 0            # sum of the elements read while m == 2


def left(acc: State, x: Real) -> State:
    m = (acc.m + 1) % 3 if x < 0 else acc.m
    return State(m, acc.s0 + x if m == 0 else acc.s0, acc.s1 + x if m == 1 else acc.s1,
                 acc.s2 + x if m == 2 else acc.s2)
