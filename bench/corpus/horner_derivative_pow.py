"""Horner's rule with the derivative, lifted with t**len and its derivative.

Source: Knuth, TAOCP vol. 2, 4.6.4; issue 14 ("Horner with the derivative")."""
from typing import NamedTuple
from thm3.lang import Real

t: Real         # the point


class State(NamedTuple):
    p: Real = 0     # p(t)
    dp: Real = 0    # p'(t)
    pw: Real = 1    # t ** len
    dpw: Real = 0   # len * t ** (len - 1)


def left(acc: State, a: Real) -> State:
    return State(acc.p * t + a, acc.dp * t + acc.p, acc.pw * t, acc.dpw * t + acc.pw)
