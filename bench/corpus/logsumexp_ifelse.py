"""Online logsumexp written with if/else (the branch-form twin of logsumexp_max).

Source: Milakov & Gimelshein 2018; issue 14 (if/else "unknown", max() proved)."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf


class State(NamedTuple):
    m: Real = -inf  # largest so far
    d: Real = 0     # sum of exp(x - m)


def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.d * exp(acc.m - x) + 1)
    else:
        return State(acc.m, acc.d + exp(x - acc.m))
