"""A peak held from -inf, decaying by 0.9 a sample, with the number of samples.

(max, *) on a value that may be negative: 0.9 * max(u, v) == max(0.9 * u, 0.9 * v) for
every real u, v, so the combine is max(0.9 ** b.n * a.peak, b.peak).  Source: an envelope
follower with instant attack and exponential release."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    peak: Real = -inf
    n: Int = 0


def left(acc: State, x: Real) -> State:
    return State(max(0.9 * acc.peak, x), acc.n + 1)
