"""Second-order linear recurrence u' = a u + b v, v' = u, as the product of companion matrices.

Source: Kogge & Stone, "A parallel algorithm for the efficient solution of a general
class of recurrence equations", IEEE TC 1973; issue 14."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m11: Real = 1   # the product C(a_n, b_n) ... C(a_1, b_1), row-major
    m12: Real = 0
    m21: Real = 0
    m22: Real = 1


def left(acc: State, a: Real, b: Real) -> State:
    # C(a, b) = [[a, b], [1, 0]] multiplied on the left
    return State(a * acc.m11 + b * acc.m21, a * acc.m12 + b * acc.m22, acc.m11, acc.m12)
