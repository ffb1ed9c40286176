"""Shortest paths through three lanes: entry (i, j) is the cheapest way from lane i to lane j,
d' = d (x) (T + c) over (min, +), with a lane change costing T and a step in lane j costing c_j.

Source: shortest paths on a layered graph as a (min, +) matrix product (Blelloch 1990);
nine fields, each with a +inf case (thm3 issue 21)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m00: Real = 0
    m01: Real = float("inf")
    m02: Real = float("inf")
    m10: Real = float("inf")
    m11: Real = 0
    m12: Real = float("inf")
    m20: Real = float("inf")
    m21: Real = float("inf")
    m22: Real = 0


def left(acc: State, c0: Real, c1: Real, c2: Real) -> State:
    return State(min(acc.m00 + 0, acc.m01 + 2, acc.m02 + 1) + c0,
                 min(acc.m00 + 1, acc.m01 + 0, acc.m02 + 2) + c1,
                 min(acc.m00 + 3, acc.m01 + 1, acc.m02 + 0) + c2,
                 min(acc.m10 + 0, acc.m11 + 2, acc.m12 + 1) + c0,
                 min(acc.m10 + 1, acc.m11 + 0, acc.m12 + 2) + c1,
                 min(acc.m10 + 3, acc.m11 + 1, acc.m12 + 0) + c2,
                 min(acc.m20 + 0, acc.m21 + 2, acc.m22 + 1) + c0,
                 min(acc.m20 + 1, acc.m21 + 0, acc.m22 + 2) + c1,
                 min(acc.m20 + 3, acc.m21 + 1, acc.m22 + 0) + c2)
