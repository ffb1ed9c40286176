"""The six smallest elements, duplicates counted (insertion into a sorted window).

Source: the k-smallest family of Parsynt (Farzan & Nicolet, PLDI 2017, `second min`)
taken to k = 6, as PyTorch's `topk(largest=False)` reduces it."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    a: Real = inf   # smallest
    b: Real = inf
    c: Real = inf
    d: Real = inf
    e: Real = inf
    f: Real = inf   # sixth smallest


def left(acc: State, x: Real) -> State:
    if x < acc.a:
        return State(x, acc.a, acc.b, acc.c, acc.d, acc.e)
    elif x < acc.b:
        return State(acc.a, x, acc.b, acc.c, acc.d, acc.e)
    elif x < acc.c:
        return State(acc.a, acc.b, x, acc.c, acc.d, acc.e)
    elif x < acc.d:
        return State(acc.a, acc.b, acc.c, x, acc.d, acc.e)
    elif x < acc.e:
        return State(acc.a, acc.b, acc.c, acc.d, x, acc.e)
    elif x < acc.f:
        return State(acc.a, acc.b, acc.c, acc.d, acc.e, x)
    else:
        return acc
