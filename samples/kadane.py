"""Kadane's maximum segment sum: best segment and best tail only (the empty segment counts)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m: Real = 0     # best segment sum so far
    t: Real = 0     # best sum of a segment ending here (tail)


def left(acc: State, x: Real) -> State:
    t = max(acc.t + x, 0)
    return State(max(acc.m, t), t)


def result(acc: State) -> Real:
    return acc.m
