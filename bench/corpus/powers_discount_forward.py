"""Discounted return, accumulated forward: G = sum of 0.99 ** t r_t, with the step t.
The step itself reads 0.99 ** t; the combine is G = G1 + 0.99 ** t1 G2.

Source: the discounted return of reinforcement learning (Sutton & Barto, ch. 3),
accumulated in time order as a logger does, without the discount kept as a field."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    t: Int = 0      # steps so far
    g: Real = 0     # sum of 0.99 ** i * r_i


def left(acc: State, r: Real) -> State:
    return State(acc.t + 1, acc.g + 0.99 ** acc.t * r)
