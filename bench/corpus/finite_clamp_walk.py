"""A walk of +1 and -1 steps clamped to [0, 3]: not a homomorphism over its position.

Source: saturating up/down counters (Smith's 2-bit predictor generalised to four states)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    s: Int = 0      # clamp(s + x, 0, 3) at each step


def left(acc: State, x: Int) -> State:
    assert x == 1 or x == -1
    return State(min(max(acc.s + x, 0), 3))
