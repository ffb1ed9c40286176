"""A hash whose escaped symbols (after a 92, a backslash) are weighted by 3.

Source: weighted automata (Schützenberger 1961): the control (escaped or not) chooses an
affine map of the data, h + x or 3 h + x, so the slope of a block's map is 3 to the number
of escaped symbols, which the control does not give; the lift adds the escape flag from the
escaped state, the hash from there, and the slope from each state.  The escape symbol is
one value of many: lists drawn at random rarely hold it."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    esc: Bool = False
    h: Int = 0


def left(acc: State, x: Int) -> State:
    if acc.esc:
        return State(False, acc.h * 3 + x)
    if x == 92:
        return State(True, acc.h)
    return State(False, acc.h + x)
