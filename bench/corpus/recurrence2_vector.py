"""Second-order linear recurrence kept as its last two values: not a homomorphism.

Source: Kogge & Stone, IEEE TC 1973 (before the lift to the companion matrix)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    u: Real = 1     # x_n
    v: Real = 0     # x_(n-1)


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.u + b * acc.v, acc.u)
