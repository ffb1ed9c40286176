"""Online logsumexp written with if/else instead of max()."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf


class State(NamedTuple):
    m: Real = -inf
    d: Real = 0


def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.d * exp(acc.m - x) + 1)
    else:
        return State(acc.m, acc.d + exp(x - acc.m))
