"""Two-lane shortest path: reaching lane 0 or lane 1 at each column, the lane costs read from the element; crossing costs 3. Only while the road is open (a negative reading toggles it) do costs accrue.

Source: issue 21, a 2-state shortest path over (min, +) gated by a toggle: the lane costs read the element (weighted automaton, Mohri 2009)."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    open_: Bool = True
    d0: Real = 0.0
    d1: Real = inf


def left(acc: State, x: Real) -> State:
    if x < 0:
        return State(not acc.open_, acc.d0, acc.d1)
    if acc.open_:
        return State(acc.open_, min(acc.d0 + x, acc.d1 + 3.0), min(acc.d1 + 2.0 * x, acc.d0 + 3.0))
    return State(acc.open_, acc.d0, acc.d1)
