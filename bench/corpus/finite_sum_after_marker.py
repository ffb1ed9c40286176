"""The sum of the elements after the first zero.

Source: Parsynt's dropwhile family (finite control with linear data); not a
homomorphism without the whole sum."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    seen: Bool = False      # a zero occurred so far
    s: Real = 0             # sum of the elements after the first zero


def left(acc: State, x: Real) -> State:
    return State(acc.seen or x == 0, acc.s + x if acc.seen else acc.s)
