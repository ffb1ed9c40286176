"""String to integer over digits: not a homomorphism without 10**len.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `atoi`."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    v: Int = 0      # the number read so far


def left(acc: State, d: Int) -> State:
    assert d >= 0 and d <= 9
    return State(acc.v * 10 + d)
