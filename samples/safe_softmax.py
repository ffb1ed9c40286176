"""Safe softmax normalizer: running max m and d = sum of exp(x - m)."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf


class State(NamedTuple):
    m: Real = -inf  # largest element so far
    d: Real = 0     # sum of exp(x - m) over the elements so far


def left(acc: State, x: Real) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))


def right(x: Real, acc: State) -> State:
    m = max(x, acc.m)
    return State(m, exp(x - m) + acc.d * exp(acc.m - m))
