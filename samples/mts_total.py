"""Maximum tail sum with the total: the largest sum of a suffix (the empty one counts)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    t: Real = 0     # best suffix (tail) sum
    s: Real = 0     # total sum


def left(acc: State, x: Real) -> State:
    return State(max(acc.t + x, 0), acc.s + x)


def right(x: Real, acc: State) -> State:
    # a suffix of [x] + xs is a suffix of xs or the whole list
    s = x + acc.s
    return State(max(s, acc.t), s)


def result(acc: State) -> Real:
    return acc.t
