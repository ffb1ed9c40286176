"""Shortest paths along a two-lane road, lane changes cost 1: the (min, +) product of the step matrices.

Source: Cormen, Leiserson, Rivest & Stein, "Introduction to Algorithms", section 25.1 (shortest
paths as (min, +) matrix products), on a line of segments with two parallel edges each."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    d00: Real = 0       # shortest path from lane i at the start to lane j now (min, +), row-major
    d01: Real = inf
    d10: Real = inf
    d11: Real = 0


def left(acc: State, w0: Real, w1: Real) -> State:
    assert w0 >= 0 and w1 >= 0
    # d_ij' = min(d_i0 + w0, d_i1 + 1 + w0) for j = 0 (and symmetrically)
    return State(min(acc.d00 + w0, acc.d01 + 1 + w0), min(acc.d00 + 1 + w1, acc.d01 + w1),
                 min(acc.d10 + w0, acc.d11 + 1 + w0), min(acc.d10 + 1 + w1, acc.d11 + w1))
