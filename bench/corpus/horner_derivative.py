"""Horner's rule with the derivative: not a homomorphism without t**len.

Source: Knuth, TAOCP vol. 2, 4.6.4 (Horner's rule for p and p'); issue 14."""
from typing import NamedTuple
from thm3.lang import Real

t: Real         # the point


class State(NamedTuple):
    p: Real = 0     # p(t) of the coefficients so far (highest degree first)
    dp: Real = 0    # p'(t)


def left(acc: State, a: Real) -> State:
    return State(acc.p * t + a, acc.dp * t + acc.p)
