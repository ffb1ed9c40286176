"""The three smallest distinct values (a repeated value is kept once).

Source: Synduce (Farzan, Lette & Nicolet, PLDI 2022), benchmark `sndmax` (distinct
values), mirrored to the smallest and taken to k = 3."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = inf   # smallest value
    b: Real = inf   # smallest value above a
    c: Real = inf   # smallest value above b


def left(acc: State, x: Real) -> State:
    if x < acc.a:
        return State(x, acc.a, acc.b)
    elif acc.a < x and x < acc.b:
        return State(acc.a, x, acc.b)
    elif acc.b < x and x < acc.c:
        return State(acc.a, acc.b, x)
    else:
        return acc
