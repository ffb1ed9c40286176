"""The discounted return in forward order with the discount a parameter, beside the plain
total: g = sum of gamma ** t r_t.

gamma ** acc.t in the step: the combine is a.g + gamma ** a.t * b.g.  Source: RL
returns computed as the rewards arrive."""
from typing import NamedTuple
from thm3.lang import Int, Real


gamma: Real     # the discount, in (0, 1)


class State(NamedTuple):
    g: Real = 0.0
    t: Int = 0
    total: Real = 0.0


def left(acc: State, r: Real) -> State:
    assert 0 < gamma < 1
    return State(acc.g + gamma ** acc.t * r, acc.t + 1, acc.total + r)
