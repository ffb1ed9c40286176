"""Best running gain while trading is open (a zero toggles it): the running total and its peak.

Source: issue 21, a max prefix sum gated by a toggle: (max, +) data whose coefficient reads the element (the running total's products are slopes)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    open_: Bool = False
    total: Real = 0.0
    best: Real = 0.0


def left(acc: State, x: Real) -> State:
    if x == 0:
        return State(not acc.open_, acc.total, acc.best)
    if acc.open_:
        return State(acc.open_, acc.total + x, max(acc.best, acc.total + x))
    return State(acc.open_, acc.total, acc.best)
