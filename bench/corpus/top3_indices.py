"""The three largest elements with their indices (ties keep the earlier element).

Source: PyTorch's `topk` reduction (k = 3, with indices); issue 14's top-2 with indices
taken to k = 3: six fields."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest
    ia: Int = -1    # its index
    b: Real = -inf  # second largest
    ib: Int = -1
    c: Real = -inf  # third largest
    ic: Int = -1


def left(acc: State, x: Real, i: Index) -> State:
    if x > acc.a:
        return State(x, i, acc.a, acc.ia, acc.b, acc.ib)
    elif x > acc.b:
        return State(acc.a, acc.ia, x, i, acc.b, acc.ib)
    elif x > acc.c:
        return State(acc.a, acc.ia, acc.b, acc.ib, x, i)
    else:
        return acc
