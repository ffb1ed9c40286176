"""Number of sign changes, counted in a Real, with the last element (a homomorphism: the
first sign follows from the parity of the count, which is an integer, and the last sign).

Source: after Parsynt's `alternating` (Farzan & Nicolet, PLDI 2017), with the count kept
in a float as ML code often does."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    c: Real = 0     # sign changes so far
    last: Real = 0  # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    assert x != 0
    flip = acc.last != 0 and (x > 0) != (acc.last > 0)
    return State(acc.c + 1 if flip else acc.c, x)
