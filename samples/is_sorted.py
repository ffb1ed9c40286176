"""Is sorted: whether the list is in non-decreasing order, keeping only the last element."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    ok: Bool = True     # the list so far is non-decreasing
    last: Real = -inf   # its last element (-inf while empty)


def left(acc: State, x: Real) -> State:
    return State(acc.ok and acc.last <= x, x)


def result(acc: State) -> Bool:
    return acc.ok
