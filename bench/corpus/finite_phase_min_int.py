"""Smallest Int reading at phase 2 of a 3-slot round robin, and the count of readings.

Source: issue 21, an Int (min, +) field from 1000 gated by a round-robin slot, beside a count."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    slot: Int = 0
    low: Int = 1000
    n: Int = 0


def left(acc: State, x: Int) -> State:
    low = min(acc.low, x) if acc.slot == 2 else acc.low
    return State((acc.slot + 1) % 3, low, acc.n + 1)
