"""Variance by the shifted-data algorithm: sums of x - K with K the first element.

Source: Chan, Golub & LeVeque, "Algorithms for computing the sample variance", 1983
(shifted data); Wikipedia, "Algorithms for calculating variance"."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # count
    k: Real = 0     # the shift: the first element
    s: Real = 0     # sum of x - k
    ss: Real = 0    # sum of (x - k)**2


def left(acc: State, x: Real) -> State:
    k = acc.k if acc.n > 0 else x
    d = x - k
    return State(acc.n + 1, k, acc.s + d, acc.ss + d * d)


def result(acc: State) -> Real:
    return (acc.ss - acc.s * acc.s / acc.n) / acc.n if acc.n > 0 else 0
