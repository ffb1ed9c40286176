"""Discounted sum from the start: G = sum of gamma**i x_i, kept with gamma**n.

Source: Sutton & Barto, "Reinforcement Learning" (2nd ed., 2018), section 3.3 (the discounted
return); the parallel form joins G1 + gamma**n1 G2."""
from typing import NamedTuple
from thm3.lang import Real

gamma: Real     # the discount


class State(NamedTuple):
    g: Real = 0     # the discounted sum so far
    d: Real = 1     # gamma ** (number of elements so far)


def left(acc: State, x: Real) -> State:
    return State(acc.g + acc.d * x, acc.d * gamma)
