"""Vector sum: the elementwise sum of a list of vectors."""
from typing import NamedTuple
from thm3.lang import Vec


class State(NamedTuple):
    s: Vec = 0      # elementwise sum so far (the zero vector for an empty list)


def left(acc: State, x: Vec) -> State:
    return State(acc.s + x)


def right(x: Vec, acc: State) -> State:
    return State(x + acc.s)


def result(acc: State) -> Vec:
    return acc.s
