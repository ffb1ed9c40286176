"""Maximum with its count over Int elements."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    m: Int = -1000000   # stands below every element
    c: Int = 0


def left(acc: State, x: Int) -> State:
    assert x > -1000000
    if x > acc.m:
        return State(x, 1)
    elif x == acc.m:
        return State(acc.m, acc.c + 1)
    else:
        return acc
