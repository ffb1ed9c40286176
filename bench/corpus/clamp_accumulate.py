"""Accumulate nonnegative amounts, clamped one below a cap: s = min(s + x, cap - 1).

Source: saturating arithmetic in Morita et al., PLDI 2007 (the clipped-sum family), with
the cap a loop parameter; the laws need the range 0 <= s <= cap - 1."""
from typing import NamedTuple
from thm3.lang import Real

cap: Real       # one above the clamp


class State(NamedTuple):
    s: Real = 0     # min(sum, cap - 1)


def left(acc: State, x: Real) -> State:
    assert x >= 0
    assert cap >= 1
    return State(min(acc.s + x, cap - 1))
