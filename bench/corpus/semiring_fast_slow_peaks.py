"""Fast and slow peak meters side by side, from -inf, with one count.

Three groups: two peaks over (max, *), each read with its own decay's power of the one
count, and the count over (+, *).  Source: a VU meter's fast and slow ballistics."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    fast: Real = -inf
    slow: Real = -inf
    n: Int = 0


def left(acc: State, x: Real) -> State:
    return State(max(acc.fast * 0.5, x), max(acc.slow * 0.95, x), acc.n + 1)
