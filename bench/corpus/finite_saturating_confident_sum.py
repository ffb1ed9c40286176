"""The sum of the values seen while a saturating up/down counter is at its top (3).

Source: saturating counters (two-bit branch predictors, Smith 1981, one level wider);
finite control with linear data: the counter's 17 transition functions need its value
from three other starts to be told apart, and the sum b adds from each of them."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    c: Int = 0      # the counter, 0 .. 3
    s: Real = 0     # the sum of x while the counter is 3


def left(acc: State, x: Real) -> State:
    c = min(acc.c + 1, 3) if x > 0 else max(acc.c - 1, 0)
    return State(c, acc.s + x if c == 3 else acc.s)
