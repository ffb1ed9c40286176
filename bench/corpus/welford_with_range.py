"""Welford's running mean and variance beside the range and the plain sum: one pass, six fields.

Source: the summary statistics a data loader keeps per feature (pandas' describe, torch's
running stats): Welford's (n, mean, m2) with min, max and sum.  The step's groups of
fields never read each other, so the combine is Chan et al.'s for the moments beside max,
min and + for the rest; found and proved group by group."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    n: Real = 0.0       # count
    mean: Real = 0.0    # running mean
    m2: Real = 0.0      # sum of squared deviations from the mean
    lo: Real = inf      # smallest value
    hi: Real = -inf     # largest value
    s: Real = 0.0       # plain sum


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    d = x - acc.mean
    mean = acc.mean + d / n
    return State(n, mean, acc.m2 + d * (x - mean), min(acc.lo, x), max(acc.hi, x), acc.s + x)
