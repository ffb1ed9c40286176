"""A decayed sum with its count: v' = 0.9 v + x, n' = n + 1.  The combine needs the
decay over b's list, 0.9 ** b.n, which b's count gives: no field has to be added.

Source: the exponentially weighted sum of signal processing (a one-pole low-pass filter)
with the sample count kept, as a streaming metrics library keeps it."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # elements so far
    v: Real = 0     # sum of x_i 0.9 ** (elements after i)


def left(acc: State, x: Real) -> State:
    return State(acc.n + 1, 0.9 * acc.v + x)
