"""A peak hold over three interleaved channels: a `% 3` phase weighs the reading (1, 0.5, 0.25), and the held peak keeps 0.8 of itself each sample.

(max, *) on nonnegatives under a phase that sets the offset, not the coefficient.  The
product 0.8 ** n is no function of the phase's transition function, so the lift carries it
once (the products from the three phases are equal and two are dropped), beside the peak
from phases 1 and 2 (3 fields).  The products' updates read no control, but the offsets
read the phase's copy: the form of the step is read with the control as data-free.
Source: time-multiplexed sensor channels with per-channel gain."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    phase: Int = 0
    peak: Real = 0.0


def left(acc: State, x: Real) -> State:
    assert x >= 0
    w = 1.0 if acc.phase == 0 else (0.5 if acc.phase == 1 else 0.25)
    return State((acc.phase + 1) % 3, max(acc.peak * 0.8, w * x))
