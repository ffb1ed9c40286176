"""Polynomial by Horner's rule, with the power of t kept alongside.

The list holds the coefficients from the highest degree down to the constant term:
h([a0, ..., a(n-1)]) = a0 * t**(n-1) + ... + a(n-1). Keeping pw = t**n makes the
fold a homomorphism: a prepended coefficient is worth a * pw."""
from typing import NamedTuple
from thm3.lang import Real

t: Real         # the point at which the polynomial is evaluated


class State(NamedTuple):
    p: Real = 0     # value of the polynomial of the coefficients so far
    pw: Real = 1    # t ** (number of coefficients so far)


def left(acc: State, a: Real) -> State:
    return State(acc.p * t + a, acc.pw * t)


def right(a: Real, acc: State) -> State:
    return State(a * acc.pw + acc.p, t * acc.pw)


def result(acc: State) -> Real:
    return acc.p
