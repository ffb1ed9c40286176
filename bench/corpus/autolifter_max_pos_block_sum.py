"""Largest sum of a maximal block of positive elements: not a homomorphism over (best, cur).

Source: AutoLifter, the `largest sum of positive blocks` benchmark; issue 15, item 4."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    best: Real = 0  # best block sum
    cur: Real = 0   # sum of the positive block at the end


def left(acc: State, x: Real) -> State:
    cur = acc.cur + x if x > 0 else 0
    return State(max(acc.best, cur), cur)
