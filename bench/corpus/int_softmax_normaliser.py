"""Online-softmax normaliser over Int elements.

Source: Milakov & Gimelshein, "Online normalizer calculation for softmax", 2018; issue 14
(over Int instead of Real)."""
from typing import NamedTuple
from thm3.lang import Int, Real, exp, inf


class State(NamedTuple):
    m: Real = -inf  # largest so far
    d: Real = 0     # sum of exp(x - m)


def left(acc: State, x: Int) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))
