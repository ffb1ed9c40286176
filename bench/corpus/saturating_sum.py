"""Sum saturating at 10 from above: not a homomorphism over the sum alone.

Source: saturating arithmetic in Morita et al., PLDI 2007 (the clipped-sum family)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # min(s + x, 10) at each step


def left(acc: State, x: Real) -> State:
    return State(min(acc.s + x, 10))
