"""Sum of squares.

Source: Morita, Morihata, Matsuzaki, Hu & Takeichi, "Automatic inversion generates
divide-and-conquer parallel programs", PLDI 2007 (the `sum` family)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # sum of squares so far


def left(acc: State, x: Real) -> State:
    return State(acc.s + x * x)


def right(x: Real, acc: State) -> State:
    return State(x ** 2 + acc.s)
