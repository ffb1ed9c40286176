"""Odometer of a 4-speed gearbox: a shift reading (0 stay, 1 up) cycles the gear (mod 4), and the distance adds the gear's ratio times the elapsed time.

Source: issue 21, finite control read straight off an Int element (a shift bit under `assert`, no predicate) with (+, *) data whose offset reads a Real element; the distance from each gear is a copy."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    gear: Int = 0
    km: Real = 0.0


def left(acc: State, dt: Real, shift: Int) -> State:
    assert dt >= 0
    assert shift >= 0
    assert shift <= 1
    gear = (acc.gear + shift) % 4
    if gear == 0:
        ratio = 1.0
    elif gear == 1:
        ratio = 1.75
    elif gear == 2:
        ratio = 2.5
    else:
        ratio = 3.25
    return State(gear, acc.km + ratio * dt)
