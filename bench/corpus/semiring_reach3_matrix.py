"""Reachability over a three-state relation that each element gives, as the (or, and) product of relations.

Source: Mytkowicz, Musuvathi & Schulte, "Data-parallel finite-state machines" (ASPLOS 2014):
a nondeterministic automaton's moves composed as Boolean matrices; here 0 -> 1 on x > 0,
1 -> 2 on x > 1, 2 -> 0 on x < -1, with self-loops where the element allows them."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    r00: Bool = True    # state j reachable from state i at the start, row-major
    r01: Bool = False
    r02: Bool = False
    r10: Bool = False
    r11: Bool = True
    r12: Bool = False
    r20: Bool = False
    r21: Bool = False
    r22: Bool = True


def left(acc: State, x: Real) -> State:
    return State((acc.r00 and x <= 1) or (acc.r02 and x < -1),
                 (acc.r00 and x > 0) or (acc.r01 and x >= -1),
                 (acc.r01 and x > 1) or acc.r02,
                 (acc.r10 and x <= 1) or (acc.r12 and x < -1),
                 (acc.r10 and x > 0) or (acc.r11 and x >= -1),
                 (acc.r11 and x > 1) or acc.r12,
                 (acc.r20 and x <= 1) or (acc.r22 and x < -1),
                 (acc.r20 and x > 0) or (acc.r21 and x >= -1),
                 (acc.r21 and x > 1) or acc.r22)
