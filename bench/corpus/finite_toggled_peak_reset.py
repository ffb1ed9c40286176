"""Peak while recording (a zero toggles recording), cleared by a negative reading.

Source: issue 21, a (max, +) field gated by a toggle and cleared by the element in every mode (the clears' product is a slope)."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    rec: Bool = False
    peak: Real = -inf


def left(acc: State, x: Real) -> State:
    rec = (not acc.rec) if x == 0 else acc.rec
    if x < 0:
        return State(rec, -inf)
    return State(rec, max(acc.peak, x) if acc.rec else acc.peak)
