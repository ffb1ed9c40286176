"""The two largest elements with their indices (ties keep the earlier element).

Source: issue 14 (top-2 with indices, Bird check proved); the top-k reduction of
PyTorch's `topk`."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest
    ia: Int = -1    # its index
    b: Real = -inf  # second largest
    ib: Int = -1    # its index


def left(acc: State, x: Real, i: Index) -> State:
    if x > acc.a:
        return State(x, i, acc.a, acc.ia)
    elif x > acc.b:
        return State(acc.a, acc.ia, x, i)
    else:
        return acc
