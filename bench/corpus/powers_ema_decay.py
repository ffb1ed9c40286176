"""Exponential moving average with the decay kept: (s, (1 - alpha)**n), the composition of the steps.

Source: the EMA of samples/ema.py with its lift (Parsynt, Farzan & Nicolet, PLDI 2017):
s = s1 (1 - alpha)**n2 + s2."""
from typing import NamedTuple
from thm3.lang import Real

alpha: Real     # smoothing factor


class State(NamedTuple):
    s: Real = 0     # the average so far
    d: Real = 1     # (1 - alpha) ** (number of elements so far)


def left(acc: State, x: Real) -> State:
    assert 0 < alpha < 1
    return State((1 - alpha) * acc.s + alpha * x, acc.d * (1 - alpha))
