"""Linear recurrence y' = a * y + b, as the composition of the affine maps y -> a*y + b.

The state (A, B) stands for the map y -> A * y + B that applies every element's map
in list order (the first element's map first)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    A: Real = 1     # slope of the composed map (identity map at the start)
    B: Real = 0     # offset of the composed map


def left(acc: State, a: Real, b: Real) -> State:
    # apply the new map after the others: a * (A*y + B) + b
    return State(a * acc.A, a * acc.B + b)


def right(a: Real, b: Real, acc: State) -> State:
    # apply the new map before the others: A * (a*y + b) + B
    return State(acc.A * a, acc.A * b + acc.B)
