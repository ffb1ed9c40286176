"""Maximum tail sum alone (the empty tail counts): not a homomorphism over this state.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `mts` before lifting."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    t: Real = 0     # best suffix sum


def left(acc: State, x: Real) -> State:
    return State(max(acc.t + x, 0))
