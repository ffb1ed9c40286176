"""Sum after dropping the leading non-positive elements: not a homomorphism.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), the `drop while` family."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    on: Bool = False    # a positive element has been seen
    s: Real = 0         # sum from the first positive element on


def left(acc: State, x: Real) -> State:
    on = acc.on or x > 0
    return State(on, acc.s + x if on else acc.s)
