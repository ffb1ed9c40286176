"""Line of sight: is the last element visible (higher than everything before it)?

Source: Morita et al., PLDI 2007 (visibility); also Parsynt's `line of sight`."""
from typing import NamedTuple
from thm3.lang import Bool, Real, inf


class State(NamedTuple):
    hi: Real = -inf         # highest so far
    visible: Bool = False   # the last element is above everything before it


def left(acc: State, x: Real) -> State:
    return State(max(acc.hi, x), x > acc.hi)
