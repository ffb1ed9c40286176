"""Horner's rule with the derivative: p(t) and p'(t), coefficients highest first, with t**len."""
from typing import NamedTuple
from thm3.lang import Real

t: Real


class State(NamedTuple):
    p: Real = 0    # value of the polynomial so far
    dp: Real = 0   # its derivative at t
    pw: Real = 1   # t ** len
    dpw: Real = 0  # derivative of t ** len


def left(acc: State, a: Real) -> State:
    return State(acc.p * t + a, acc.dp * t + acc.p, acc.pw * t, acc.dpw * t + acc.pw)
