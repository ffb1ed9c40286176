"""A sum whose sign switches at each negative element.

Source: alternating sums of Parsynt (`parsynt_alternating`), with the sign kept by a flag
that the elements toggle (finite control with linear data)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    flip: Bool = False      # an odd number of negative elements so far
    s: Real = 0             # sum of x, negated while flip holds


def left(acc: State, x: Real) -> State:
    flip = acc.flip != (x < 0)
    return State(flip, acc.s - x if flip else acc.s + x)
