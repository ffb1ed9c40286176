"""Reachability over a two-state relation that each element gives, as the (or, and) product of relations.

Source: Hillis & Steele, "Data parallel algorithms" (CACM 1986): composing relations (Boolean
matrices) for a parallel scan of a nondeterministic automaton's moves."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    r00: Bool = True    # state j reachable from state i at the start, row-major
    r01: Bool = False
    r10: Bool = False
    r11: Bool = True


def left(acc: State, x: Real) -> State:
    # 0 -> 0 when x <= 1, 0 -> 1 when x > 0, 1 -> 0 when x < 0, 1 -> 1 when x >= -1
    return State((acc.r00 and x <= 1) or (acc.r01 and x < 0), (acc.r00 and x > 0) or (acc.r01 and x >= -1),
                 (acc.r10 and x <= 1) or (acc.r11 and x < 0), (acc.r10 and x > 0) or (acc.r11 and x >= -1))
