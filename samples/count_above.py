"""Count above a threshold: how many elements are strictly greater than it."""
from typing import NamedTuple
from thm3.lang import Int, Real

threshold: Real     # elements above this value are counted


class State(NamedTuple):
    n: Int = 0      # number of elements > threshold so far


def left(acc: State, x: Real) -> State:
    return State(acc.n + 1 if x > threshold else acc.n)


def result(acc: State) -> Int:
    return acc.n
