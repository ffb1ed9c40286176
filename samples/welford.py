"""Welford variance: one-pass mean and sum of squared deviations (population variance)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # number of elements seen
    mean: Real = 0  # mean of the elements seen
    M2: Real = 0    # sum of squared deviations from the mean


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    delta = x - acc.mean
    mean = acc.mean + delta / n
    M2 = acc.M2 + delta * (x - mean)
    return State(n, mean, M2)


def result(acc: State) -> Real:
    return acc.M2 / acc.n if acc.n > 0 else 0.0
