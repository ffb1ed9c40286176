"""A peak meter: the held peak halves each tick and a louder sample replaces it.

Affine over (max, *) on the peak, peak' = max(0.5 * peak, x), beside a count of ticks over
(+, *): after b's list a's peak has decayed by 0.5 ** (b's ticks), so the combine is
max(0.5 ** b.ticks * a.peak, b.peak) (b's peak, held from 0, stands for the map's offset
because a peak never falls below 0).  Source: audio peak-programme meters; a GPU
utilisation peak-hold."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    peak: Real = 0.0
    ticks: Int = 0


def left(acc: State, x: Real) -> State:
    return State(max(acc.peak * 0.5, x), acc.ticks + 1)
