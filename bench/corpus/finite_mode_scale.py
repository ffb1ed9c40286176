"""A sum that doubles once a negative value has been seen: finite control, linear data that scales.

Source: weighted automata (Schützenberger 1961; Mytkowicz et al., ASPLOS 2014, for the
data-parallel composition of finite-state machines): the control (mode) chooses an affine
map of the data, s + x in mode 0 and 2 s + x in mode 1, so the list's map of s from each
mode has a slope, a power of 2 that the control does not give.  The lift adds the sum
from mode 1 and the slope from each mode, and the combine composes the maps."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    mode: Int = 0   # 1 once a negative value was seen
    s: Real = 0     # the weighted sum


def left(acc: State, x: Real) -> State:
    if x < 0:
        return State(1, acc.s)
    if acc.mode == 1:
        return State(1, 2 * acc.s + x)
    return State(0, acc.s + x)
