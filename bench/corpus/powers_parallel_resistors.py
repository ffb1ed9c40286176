"""Resistors in parallel: the total resistance r1 r2 / (r1 + r2), one resistor at a time.

Source: Ohm's law for conductances in parallel (1 / r adds up); issue 21's "combines
through reciprocals" class: the combine goes through the conductance 1 / r."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    r: Real = 0     # the resistance of the resistors so far in parallel (0 while there is none)


def left(acc: State, x: Real) -> State:
    assert x > 0
    if acc.r == 0:
        return State(x)
    return State(acc.r * x / (acc.r + x))
