"""The four smallest elements, duplicates counted (insertion into a sorted window).

Source: the k-smallest family of Parsynt (Farzan & Nicolet, PLDI 2017, `second min`)
taken to k = 4, as PyTorch's `topk(largest=False)` reduces it."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = inf   # smallest
    b: Real = inf   # second smallest
    c: Real = inf   # third smallest
    d: Real = inf   # fourth smallest


def left(acc: State, x: Real) -> State:
    if x < acc.a:
        return State(x, acc.a, acc.b, acc.c)
    elif x < acc.b:
        return State(acc.a, x, acc.b, acc.c)
    elif x < acc.c:
        return State(acc.a, acc.b, x, acc.c)
    elif x < acc.d:
        return State(acc.a, acc.b, acc.c, x)
    else:
        return acc
