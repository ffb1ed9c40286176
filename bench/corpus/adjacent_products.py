"""Sum of products of neighbours: not a homomorphism without the first element.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), the loops with a previous-element field."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of x_i * x_(i+1)
    prev: Real = 0  # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    return State(acc.s + acc.prev * x, x)
