"""The three largest distinct values (a repeated value is kept once).

Source: Synduce (Farzan, Lette & Nicolet, PLDI 2022), benchmark `sndmax` (distinct
values) taken to k = 3."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest value
    b: Real = -inf  # largest value below a
    c: Real = -inf  # largest value below b


def left(acc: State, x: Real) -> State:
    if x > acc.a:
        return State(x, acc.a, acc.b)
    elif x < acc.a and x > acc.b:
        return State(acc.a, x, acc.b)
    elif x < acc.b and x > acc.c:
        return State(acc.a, acc.b, x)
    else:
        return acc
