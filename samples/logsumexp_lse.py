"""Log-sum-exp in one field: lse' = log(exp(lse) + exp(x)), computed stably."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf, log


class State(NamedTuple):
    lse: Real = -inf    # log of the sum of exp(x) so far (-inf for an empty list)


def left(acc: State, x: Real) -> State:
    mx = max(acc.lse, x)
    # both exp arguments are <= 0; exp(-inf - x) = 0 on the first step
    return State(mx + log(exp(acc.lse - mx) + exp(x - mx)))


def result(acc: State) -> Real:
    return acc.lse
