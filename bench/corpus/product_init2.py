"""A product whose initial value is 2: h(xs) = 2 * prod(xs), combine a * b / 2."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    p: Real = 2


def left(acc: State, x: Real) -> State:
    return State(acc.p * x)
