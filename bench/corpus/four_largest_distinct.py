"""The four largest distinct values (a repeated value is kept once).

Source: Synduce (Farzan, Lette & Nicolet, PLDI 2022), benchmark `sndmax` taken to k = 4."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest value
    b: Real = -inf  # largest value below a
    c: Real = -inf  # largest value below b
    d: Real = -inf  # largest value below c


def left(acc: State, x: Real) -> State:
    if x > acc.a:
        return State(x, acc.a, acc.b, acc.c)
    elif x < acc.a and x > acc.b:
        return State(acc.a, x, acc.b, acc.c)
    elif x < acc.b and x > acc.c:
        return State(acc.a, acc.b, x, acc.c)
    elif x < acc.c and x > acc.d:
        return State(acc.a, acc.b, acc.c, x)
    else:
        return acc
