"""Cheapest route cost so far, Int costs: a toll doubles in peak hours (a phase of a 3-tick cycle); a free exit (a negative reading) caps the cost at its value.

Source: issue 21, Int costs over (min, +) under a 3-tick clock, capped by a free exit; the cost starts at 0 and rises past it (Real copies from inf: an Int holds no infinity)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    tick: Int = 0
    cost: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= -50
    assert x <= 50
    tick = (acc.tick + 1) % 3
    if x < 0:
        return State(tick, min(acc.cost, -x))
    if acc.tick == 2:
        return State(tick, acc.cost + 2 * x)
    return State(tick, acc.cost + x)
