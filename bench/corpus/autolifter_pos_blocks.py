"""Number of blocks of positive elements, with the previous sign: not a homomorphism.

Source: AutoLifter, the `count blocks` family."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    c: Int = 0          # blocks so far
    prev: Bool = False  # the last element was positive


def left(acc: State, x: Real) -> State:
    pos = x > 0
    return State(acc.c + 1 if pos and not acc.prev else acc.c, pos)
