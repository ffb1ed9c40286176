"""Reachability of two nodes (or, and) over a link whose forward edge exists only by day; a toggle element switches day and night.

Finite control (the toggled mode) with a 2 x 2 Boolean step.  Not a homomorphism; the
copies lift holds whether node 1 is reached from the other mode (1 field).  Source:
transitive closure of time-varying graphs by Boolean matrix products (Fischer and Meyer
1971)."""
from typing import NamedTuple
from thm3.lang import Bool


class State(NamedTuple):
    night: Bool = False
    r0: Bool = True
    r1: Bool = False


def left(acc: State, e01: Bool, e10: Bool, toggle: Bool) -> State:
    night = acc.night != toggle
    if night:
        return State(night, acc.r0 or (acc.r1 and e10), acc.r1)
    return State(night, acc.r0 or (acc.r1 and e10), acc.r1 or (acc.r0 and e01))
