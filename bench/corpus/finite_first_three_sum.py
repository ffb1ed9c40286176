"""The sum of the first three elements, with the count capped at 3.

Source: a warm-up window (the first k samples averaged for a baseline; AutoLifter's and
Parsynt's prefix-bounded sums): not a homomorphism over (n, s), since b's first elements
count only as far as a leaves room.  The lift adds the sums b's list makes from n = 1 and
from n = 2 (its first two and its first element); the copies of n from there are functions
of n itself (min(n + 1, 3), min(n + 2, 3)) and add nothing."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # min(length, 3)
    s: Real = 0     # the sum of the first three elements


def left(acc: State, x: Real) -> State:
    return State(min(acc.n + 1, 3), acc.s + x if acc.n < 3 else acc.s)
