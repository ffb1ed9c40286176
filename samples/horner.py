"""Horner's rule: a polynomial at t from its coefficients, highest degree first."""
from typing import NamedTuple
from thm3.lang import Real

t: Real         # the point at which the polynomial is evaluated


class State(NamedTuple):
    p: Real = 0     # value of the polynomial of the coefficients so far


def left(acc: State, a: Real) -> State:
    return State(acc.p * t + a)


def result(acc: State) -> Real:
    return acc.p
