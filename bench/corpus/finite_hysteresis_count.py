"""The number of samples while a hysteresis switch is on (on above hi, off below lo).

Source: Schmitt-trigger style thresholding (a two-state automaton whose input cells are x > hi,
x < lo and between); finite control with linear data: the count b adds from the "on"
state and whether b ends on from there are the two fields to add."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real

hi: Real
lo: Real


class State(NamedTuple):
    on: Bool = False
    n_on: Int = 0


def left(acc: State, x: Real) -> State:
    on = True if x > hi else (False if x < lo else acc.on)
    return State(on, acc.n_on + 1 if on else acc.n_on)
