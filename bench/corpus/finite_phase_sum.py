"""The sum of every fourth element (positions 0, 4, 8, ...) with a phase counter mod 4.

Source: finite control with linear data (Mytkowicz, Musuvathi and Schulte, ASPLOS 2014):
the phase is a 4-state automaton that only rotates; the sum b adds depends on the phase a
block starts in, so the lift adds b's sum from each other phase (3 fields), and the
combine picks the one a's phase selects.  Random lists reach phase 2 only by words of
length 2 (+ 4k): a sum from phase 1 is 0 on every list of length 2, which a fit on short
lists alone takes for the answer."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    ph: Int = 0         # the position mod 4
    s: Real = 0         # the sum of the elements at phase 0


def left(acc: State, x: Real) -> State:
    return State((acc.ph + 1) % 4, acc.s + x if acc.ph == 0 else acc.s)
