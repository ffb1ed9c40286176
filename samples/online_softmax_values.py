"""Online softmax with scalar values: sum of softmax(s) * v in one pass (attention, D = 1)."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf


class State(NamedTuple):
    m: Real = -inf  # largest score so far
    d: Real = 0     # sum of exp(s - m)
    o: Real = 0     # sum of exp(s - m) * v


def left(acc: State, s: Real, v: Real) -> State:
    m = max(acc.m, s)
    c = exp(acc.m - m)      # rescales the old sums to the new max
    e = exp(s - m)
    return State(m, acc.d * c + e, acc.o * c + e * v)


def right(s: Real, v: Real, acc: State) -> State:
    m = max(s, acc.m)
    c = exp(acc.m - m)
    e = exp(s - m)
    return State(m, e + acc.d * c, e * v + acc.o * c)


def result(acc: State) -> Real:
    # an empty (fully masked) row gives 0, not NaN
    return acc.o / acc.d if acc.d > 0 else 0.0
