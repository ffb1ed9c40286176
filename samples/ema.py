"""Exponential moving average: s' = (1 - alpha) * s + alpha * x, starting from 0."""
from typing import NamedTuple
from thm3.lang import Real

alpha: Real     # smoothing factor, weight of the newest element


class State(NamedTuple):
    s: Real = 0     # the average so far


def left(acc: State, x: Real) -> State:
    assert 0 < alpha < 1
    return State((1 - alpha) * acc.s + alpha * x)


def result(acc: State) -> Real:
    return acc.s
