"""Is the list sorted (non-decreasing)? Not a homomorphism without the first element.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `is sorted`."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    ok: Bool = True     # sorted so far
    last: Real = -inf   # last element


def left(acc: State, x: Real) -> State:
    return State(acc.ok and x >= acc.last, x)
