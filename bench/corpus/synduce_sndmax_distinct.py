"""Largest and second largest distinct values.

Source: Synduce (PLDI 2022), benchmark `sndmax`; Morita et al. PLDI 2007 (second maximum)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest value
    b: Real = -inf  # largest value below a


def left(acc: State, x: Real) -> State:
    if x > acc.a:
        return State(x, acc.a)
    elif x < acc.a and x > acc.b:
        return State(acc.a, x)
    else:
        return acc
