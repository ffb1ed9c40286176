"""Top two with indices: the two largest elements and their positions (Morita PLDI'07)."""
from typing import NamedTuple
from thm3.lang import Index, Int, Real, inf


class State(NamedTuple):
    a: Real = -inf  # largest element so far
    ia: Int = -1    # its index (the first one on ties)
    b: Real = -inf  # second largest
    ib: Int = -1    # its index


def left(acc: State, x: Real, i: Index) -> State:
    if x > acc.a:
        return State(x, i, acc.a, acc.ia)
    elif x > acc.b:
        return State(acc.a, acc.ia, x, i)
    else:
        return acc
