"""Second-order linear recurrence y' = a*y + b*y_prev as a product of 2x2 matrices."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m11: Real = 1
    m12: Real = 0
    m21: Real = 0
    m22: Real = 1


def left(acc: State, a: Real, b: Real) -> State:
    # acc times [[a, b], [1, 0]]
    return State(acc.m11 * a + acc.m12, acc.m11 * b, acc.m21 * a + acc.m22, acc.m21 * b)
