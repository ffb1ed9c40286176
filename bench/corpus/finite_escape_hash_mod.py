"""A hash mod 251 whose escaped symbols (after a 92, a backslash) are weighted by 3.

Source: weighted automata over the integers mod 251 (rolling hashes with an escape state):
the control (escaped or not) chooses the map h -> (h + x) % 251 or (3 h + x) % 251, so a
block's map has a slope 3 ** k mod 251, k the escaped symbols, which the control does not
give; the lift adds the escape flag and the hash from the escaped state and the slope
from each state, all remainders mod 251.  The modulus is too large for the hash to be
finite control."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    esc: Bool = False
    h: Int = 0


def left(acc: State, x: Int) -> State:
    if acc.esc:
        return State(False, (acc.h * 3 + x) % 251)
    if x == 92:
        return State(True, acc.h)
    return State(False, (acc.h + x) % 251)
