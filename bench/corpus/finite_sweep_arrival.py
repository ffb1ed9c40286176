"""Elevator sweep: earliest arrival time, where the travel cost of a floor depends on the direction.

The direction flips at a negative reading; going up the cost is the reading, going down twice it.

Source: issue 21, finite control with (min, +) data whose coefficient reads the element and the direction; the time starts at 0, not at the zero (inf), and rises past it, so the copies come from inf."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    up: Bool = True
    t: Real = 0.0


def left(acc: State, x: Real) -> State:
    assert x >= -10
    if x < 0:
        return State(not acc.up, min(acc.t, -x))
    if acc.up:
        return State(acc.up, acc.t + x)
    return State(acc.up, acc.t + 2.0 * x)
