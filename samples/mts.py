"""Maximum tail sum: the largest sum of a suffix (the empty suffix counts), without the total."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    t: Real = 0     # best suffix (tail) sum so far


def left(acc: State, x: Real) -> State:
    return State(max(acc.t + x, 0))


def result(acc: State) -> Real:
    return acc.t
