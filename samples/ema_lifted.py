"""Exponential moving average with its decay weight: s' = (1 - alpha) * s + alpha * x.

Keeping w = (1 - alpha) ** n alongside s makes the fold a homomorphism: a prepended
element's weight in s is alpha * w."""
from typing import NamedTuple
from thm3.lang import Real

alpha: Real     # smoothing factor, weight of the newest element


class State(NamedTuple):
    s: Real = 0     # the average so far (starts from 0)
    w: Real = 1     # (1 - alpha) ** (number of elements so far)


def left(acc: State, x: Real) -> State:
    assert 0 < alpha < 1
    return State((1 - alpha) * acc.s + alpha * x, (1 - alpha) * acc.w)


def right(x: Real, acc: State) -> State:
    return State(alpha * x * acc.w + acc.s, (1 - alpha) * acc.w)


def result(acc: State) -> Real:
    return acc.s
