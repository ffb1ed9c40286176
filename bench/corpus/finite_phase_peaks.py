"""Peak of every third sample (a 3-phase commutator), the phase counted from the start.

Source: issue 21, a (max, +) field gated by a phase mod 3 (a commutator)."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    phase: Int = 0
    peak: Real = -inf


def left(acc: State, x: Real) -> State:
    peak = max(acc.peak, x) if acc.phase == 0 else acc.peak
    return State((acc.phase + 1) % 3, peak)
