"""The three smallest elements, duplicates counted (merged in the combine).

Source: issue 14 (three smallest values merged; a right fold is given)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = inf   # smallest
    b: Real = inf   # second smallest
    c: Real = inf   # third smallest


def left(acc: State, x: Real) -> State:
    if x < acc.a:
        return State(x, acc.a, acc.b)
    elif x < acc.b:
        return State(acc.a, x, acc.b)
    elif x < acc.c:
        return State(acc.a, acc.b, x)
    else:
        return acc


def right(x: Real, acc: State) -> State:
    if x <= acc.a:
        return State(x, acc.a, acc.b)
    elif x <= acc.b:
        return State(acc.a, x, acc.b)
    elif x <= acc.c:
        return State(acc.a, acc.b, x)
    else:
        return acc
