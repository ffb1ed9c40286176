"""Online logsumexp written with max().

Source: Milakov & Gimelshein 2018; issue 14."""
from typing import NamedTuple
from thm3.lang import Real, exp, inf


class State(NamedTuple):
    m: Real = -inf  # largest so far
    d: Real = 0     # sum of exp(x - m)


def left(acc: State, x: Real) -> State:
    m = max(acc.m, x)
    return State(m, acc.d * exp(acc.m - m) + exp(x - m))
