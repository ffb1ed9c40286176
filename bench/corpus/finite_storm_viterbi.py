"""Two-state best path scores (max, +) whose transition costs switch for good once an alarm element puts the model in its storm regime.

Finite control (a sticky regime flag set by the element) with a 2 x 2 (max, +) step that
depends on it.  Not a homomorphism; the copies lift holds the composed step's matrix
from each regime, less what the fields give (6 fields).  Source: regime-switching HMMs
decoded by Viterbi (Hamilton 1989), with an absorbing regime."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    storm: Bool = False
    s0: Real = 0.0
    s1: Real = float("-inf")


def left(acc: State, e0: Real, e1: Real, alarm: Bool) -> State:
    storm = acc.storm or alarm
    if storm:
        return State(True, max(acc.s0 - 3.0, acc.s1 - 1.0) + e0, max(acc.s0 - 1.0, acc.s1) + e1)
    return State(False, max(acc.s0, acc.s1 - 2.0) + e0, max(acc.s0 - 2.0, acc.s1) + e1)
