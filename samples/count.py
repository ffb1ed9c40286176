"""Count: the number of elements."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0      # number of elements seen


def left(acc: State, x: Real) -> State:
    return State(acc.n + 1)


def right(x: Real, acc: State) -> State:
    return State(1 + acc.n)


def result(acc: State) -> Int:
    return acc.n
