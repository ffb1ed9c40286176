"""Has the length reached 9? Kept with the length.

Source: issue 15, finding 3 (a flag that no short sampled list reaches)."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    n: Int = 0              # length
    reached: Bool = False   # n >= 9


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    return State(n, acc.reached or n >= 9)
