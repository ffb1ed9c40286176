"""While a session is open (a zero toggles it): the discounted revenue (each reading scales it by 0.5 and adds the reading) and the cheapest reading seen plus a handling cost of 2 per reading.

Source: issue 21, a (+, *) group (a decayed sum) beside a (min, +) group (a cheapest price with a handling cost a step) under one toggle: each group gets its own slopes."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    open_: Bool = False
    revenue: Real = 0.0
    cheapest: Real = inf


def left(acc: State, x: Real) -> State:
    if x == 0:
        return State(not acc.open_, acc.revenue, acc.cheapest)
    if acc.open_:
        return State(acc.open_, 0.5 * acc.revenue + x, min(acc.cheapest + 2.0, x))
    return State(acc.open_, acc.revenue, acc.cheapest)
