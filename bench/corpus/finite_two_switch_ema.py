"""An EMA with decay a that runs only while both a gate and an armed flag are on.

Source: finite control with a parameter weight over two flags (a toggled gate, an armed
flag set by large negative values and cleared by zeros): the level's map from each of
the four control states has a slope, a power of a, that the state does not hold."""
from typing import NamedTuple
from thm3.lang import Bool, Real

a: Real


class State(NamedTuple):
    gate: Bool = False
    armed: Bool = False
    level: Real = 0


def left(acc: State, x: Real) -> State:
    if x > 100:
        return State(not acc.gate, acc.armed, acc.level)
    if x < -100:
        return State(acc.gate, True, acc.level)
    if x == 0:
        return State(acc.gate, False, acc.level)
    if acc.gate and acc.armed:
        return State(acc.gate, acc.armed, a * acc.level + x)
    return acc
