"""The three smallest values of a list, merged (duplicates count)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    s1: Real = inf  # smallest
    s2: Real = inf  # second smallest
    s3: Real = inf  # third smallest


def left(acc: State, x: Real) -> State:
    if x < acc.s1:
        return State(x, acc.s1, acc.s2)
    elif x < acc.s2:
        return State(acc.s1, x, acc.s2)
    elif x < acc.s3:
        return State(acc.s1, acc.s2, x)
    else:
        return acc


def right(x: Real, acc: State) -> State:
    if x < acc.s1:
        return State(x, acc.s1, acc.s2)
    elif x < acc.s2:
        return State(acc.s1, x, acc.s2)
    elif x < acc.s3:
        return State(acc.s1, acc.s2, x)
    else:
        return acc
