"""A peak meter whose release is a loop parameter in (0, 1).

(max, *) with a parameter's coefficient: the combine is max(decay ** b.n * a.peak, b.peak).
Source: a configurable peak-hold for a serving dashboard."""
from typing import NamedTuple
from thm3.lang import Int, Real


decay: Real     # the factor a sample, in (0, 1)


class State(NamedTuple):
    peak: Real = 0.0
    n: Int = 0


def left(acc: State, x: Real) -> State:
    assert 0 < decay < 1
    return State(max(acc.peak * decay, x), acc.n + 1)
