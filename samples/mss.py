"""Maximum segment sum: the largest sum of a contiguous segment (the empty segment counts)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # total sum
    p: Real = 0     # best prefix sum
    t: Real = 0     # best suffix (tail) sum
    m: Real = 0     # best segment sum


def left(acc: State, x: Real) -> State:
    s = acc.s + x
    t = max(acc.t + x, 0)
    return State(s, max(acc.p, s), t, max(acc.m, t))


def right(x: Real, acc: State) -> State:
    p = max(0, x + acc.p)
    return State(x + acc.s, p, max(x + acc.s, acc.t), max(p, acc.m))


def result(acc: State) -> Real:
    return acc.m
