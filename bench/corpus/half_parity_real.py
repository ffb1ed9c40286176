"""A sum with a flag set when twice the sum so far is odd: over Real.

Source: thm3 issue 21, "Int against Real": `(2 * n) % 2 == 1` never holds for an
integer n (the flag stays False and the loop is a sum and an or), but a Real n with a
half in it sets it, so the flag depends on where the list is split."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    n: Real = 0           # the sum
    odd: Bool = False   # some prefix before the last element had 2 * sum odd


def left(acc: State, x: Real) -> State:
    return State(acc.n + x, acc.odd or (2 * acc.n) % 2 == 1)
