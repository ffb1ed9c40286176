"""Log-sum-exp: log of the sum of exp(x), kept as a running max and a scaled sum."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf, log


class State(NamedTuple):
    m: Real = -inf  # largest element so far
    d: Real = 0     # sum of exp(x - m) over the elements so far


def left(acc: State, x: Real) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))


def right(x: Real, acc: State) -> State:
    m = max(x, acc.m)
    return State(m, exp(x - m) + acc.d * exp(acc.m - m))


def result(acc: State) -> Real:
    # -inf for an empty list (log 0), without evaluating log(0)
    return acc.m + log(acc.d) if acc.d > 0 else -inf
