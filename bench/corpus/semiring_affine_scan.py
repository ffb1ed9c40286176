"""Affine recurrence y' = a y + b with both coefficients from the element: not a homomorphism on y alone.

Source: Blelloch, "Prefix sums and their applications" (1990), section 1.4 (first-order
linear recurrences); the lift is the composed affine map's slope, the product of the a's."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    y: Real = 0     # the recurrence's value


def left(acc: State, a: Real, b: Real) -> State:
    return State(a * acc.y + b)
