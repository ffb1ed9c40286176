"""Twice the product of the elements (initial value 2): combine a * b / 2.

Source: issue 14 (a product whose initial value is 2)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    p: Real = 2     # 2 * product so far


def left(acc: State, x: Real) -> State:
    return State(acc.p * x)
