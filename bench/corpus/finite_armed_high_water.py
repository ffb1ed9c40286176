"""High-water mark of queue depth, counted only while the monitor is armed; a zero toggles it.

Source: issue 21, A high-water mark gated by a toggled flag (finite control with (max, +) data)."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    armed: Bool = False
    hw: Real = -inf


def left(acc: State, x: Real) -> State:
    armed = (not acc.armed) if x == 0 else acc.armed
    hw = max(acc.hw, x) if acc.armed else acc.hw
    return State(armed, hw)
