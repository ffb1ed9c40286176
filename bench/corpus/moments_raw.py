"""Raw power sums up to the fourth (the naive route to kurtosis).

Source: Pébay, SAND2008-6212, sec. 1 (the textbook power sums)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # count
    s1: Real = 0    # sum of x
    s2: Real = 0    # sum of x**2
    s3: Real = 0    # sum of x**3
    s4: Real = 0    # sum of x**4


def left(acc: State, x: Real) -> State:
    x2 = x * x
    return State(acc.n + 1, acc.s1 + x, acc.s2 + x2, acc.s3 + x2 * x, acc.s4 + x2 * x2)
