"""The best score of a reading less its age, over three interleaved channels: a `% 3` phase weighs the reading (1, 0.5, 0.25), and each sample ages the best by 1.

(max, +) under a phase that sets the offset: the lift adds the best from phases 1 and 2
(from -inf) and the age's slope, -n, once (3 fields).  Before the control in the offset was
read as data-free, no slope was added and the lift search ended with no lift.  Source:
recency-weighted best readings across time-multiplexed channels."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    phase: Int = 0
    best: Real = -inf


def left(acc: State, x: Real) -> State:
    w = 1.0 if acc.phase == 0 else (0.5 if acc.phase == 1 else 0.25)
    return State((acc.phase + 1) % 3, max(acc.best - 1.0, w * x))
