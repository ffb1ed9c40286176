"""Online softmax normaliser over Int elements: running max and sum of exp(x - m)."""
from typing import NamedTuple
from thm3.lang import Int, Real, exp, inf


class State(NamedTuple):
    m: Real = -inf
    d: Real = 0


def left(acc: State, x: Int) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))
