"""The cheapest offer so far, every earlier offer inflated by 5% a period.

(min, *): min(1.05 * cost, x); after b's periods a's cheapest has grown by 1.05 ** b.t,
so the combine is min(1.05 ** b.t * a.cost, b.cost).  Source: procurement in nominal
prices under constant inflation."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    cost: Real = inf
    t: Int = 0


def left(acc: State, x: Real) -> State:
    c = acc.cost * 1.05
    return State(c if c < x else x, acc.t + 1)
