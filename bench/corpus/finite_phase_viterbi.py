"""Three-phase duty cycle (`% 3`); in phase 0 a two-state HMM's log-scores move with the reading as emission, in phase 1 they take a fixed penalty, in phase 2 they hold.

Source: issue 21, a 2-state HMM over (max, +) gated by a 3-phase clock; the emission is the reading (its products along a list are slopes, fitted to the digit)."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    phase: Int = 0
    a: Real = 0.0
    b: Real = -inf


def left(acc: State, x: Real) -> State:
    ph = (acc.phase + 1) % 3
    if acc.phase == 0:
        return State(ph, max(acc.a, acc.b - 2.0) + x, max(acc.b, acc.a - 1.0) - x)
    if acc.phase == 1:
        return State(ph, acc.a - 0.5, acc.b - 0.25)
    return State(ph, acc.a, acc.b)
