"""Exponential moving average with alpha 1/2: not a homomorphism without 2**-len.

Source: the `ema` loop of Parsynt-style benchmarks (Farzan & Nicolet, PLDI 2017)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    v: Real = 0     # the average


def left(acc: State, x: Real) -> State:
    return State((acc.v + x) / 2)
