"""Shifted variance: sums of x - k and (x - k)**2 with the shift k the first element."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0
    k: Real = 0     # the shift: the first element
    ex: Real = 0    # sum of x - k
    ex2: Real = 0   # sum of (x - k)**2


def left(acc: State, x: Real) -> State:
    k = x if acc.n == 0 else acc.k
    return State(acc.n + 1, k, acc.ex + (x - k), acc.ex2 + (x - k) ** 2)
