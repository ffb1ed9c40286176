"""All positive: whether every element is > 0 (true for an empty list)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    ok: Bool = True     # every element so far is positive


def left(acc: State, x: Real) -> State:
    return State(acc.ok and x > 0)


def right(x: Real, acc: State) -> State:
    return State(x > 0 and acc.ok)


def result(acc: State) -> Bool:
    return acc.ok
