"""Ones counted while inside brackets: 2 opens or closes, 1 counts inside only.

Source: AutoLifter's and Parsynt's "count inside a region" loops (finite control with
linear data: a weighted automaton); not a homomorphism without the count outside."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    inside: Bool = False    # an odd number of 2s so far
    c: Int = 0              # ones seen while inside


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1 or x == 2
    return State(acc.inside != (x == 2), acc.c + 1 if acc.inside and x == 1 else acc.c)
