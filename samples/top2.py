"""Top two: the largest and second-largest elements (duplicates count twice)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest element so far
    b: Real = -inf  # second largest (equal to a when the largest occurs twice)


def left(acc: State, x: Real) -> State:
    if x > acc.a:
        return State(x, acc.a)
    elif x > acc.b:
        return State(acc.a, x)
    else:
        return acc


def right(x: Real, acc: State) -> State:
    # the top two of a multiset do not depend on the order
    if x > acc.a:
        return State(x, acc.a)
    elif x > acc.b:
        return State(acc.a, x)
    else:
        return acc
