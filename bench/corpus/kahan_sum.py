"""Kahan's compensated sum (over the reals the compensation stays 0).

Source: Kahan, "Further remarks on reducing truncation errors", CACM 8(1), 1965."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # running sum
    c: Real = 0     # compensation: the low part lost by the last addition


def left(acc: State, x: Real) -> State:
    y = x - acc.c
    t = acc.s + y
    return State(t, (t - acc.s) - y)
