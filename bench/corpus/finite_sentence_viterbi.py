"""Two-tag Viterbi scores restarted at a sentence boundary (a reading above 100); the emission score is the reading for tag 0 and its negation for tag 1.

Source: issue 21, a 2-tag Viterbi over (max, +) restarted at a boundary: the scores start at 0, not at the zero, and go below it, so the copies come from -inf."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    bounded: Bool = False
    s0: Real = 0.0
    s1: Real = 0.0


def left(acc: State, x: Real) -> State:
    if x > 100:
        return State(True, 0.0, 0.0)
    return State(acc.bounded, max(acc.s0, acc.s1 - 1.0) + x, max(acc.s1, acc.s0 - 1.0) - x)
