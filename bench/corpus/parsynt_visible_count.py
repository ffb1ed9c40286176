"""Number of visible buildings (elements above every earlier one): not a homomorphism.

Source: after Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `line of sight`."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m: Real = -inf  # highest so far
    c: Int = 0      # visible so far


def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.c + 1)
    else:
        return acc
