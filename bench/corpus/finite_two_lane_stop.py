"""Cheapest cost to be in lane 0 or lane 1 (min, +), with a lane change costing 2, frozen once a stop element arrives.

Finite control (a sticky stop flag) with a 2 x 2 (min, +) step.  Not a homomorphism; the
copies lift holds the composed step's column for lane 1 (2 fields): the column for lane 0
is the fields.  Source: shortest paths on a two-lane line graph (Mohri 2009, weighted
automata over the tropical semiring)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    stopped: Bool = False
    c0: Real = 0.0
    c1: Real = float("inf")


def left(acc: State, w0: Real, w1: Real, stop: Bool) -> State:
    if acc.stopped or stop:
        return State(True, acc.c0, acc.c1)
    return State(False, min(acc.c0, acc.c1 + 2.0) + w0, min(acc.c0 + 2.0, acc.c1) + w1)
