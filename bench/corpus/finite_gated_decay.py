"""A level that decays by rho and takes the value only while a gate is open, with a count of the openings.

Source: finite control with a parameter weight (gated filters in telemetry): values above
10 open the gate, values below -10 close it; while it is open the level is rho level + x.
The openings count is a plain sum; the level's map from each gate state has a slope, a
power of rho, that the state does not hold."""
from typing import NamedTuple
from thm3.lang import Bool, Real

rho: Real


class State(NamedTuple):
    open: Bool = False
    level: Real = 0
    openings: Real = 0


def left(acc: State, x: Real) -> State:
    if x > 10:
        return State(True, acc.level, acc.openings + 1)
    if x < -10:
        return State(False, acc.level, acc.openings)
    if acc.open:
        return State(acc.open, rho * acc.level + x, acc.openings)
    return acc
