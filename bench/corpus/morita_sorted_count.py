"""Number of descents (adjacent pairs with x_i > x_i+1), with the last element and a flag.

Source: Morita et al., PLDI 2007 (the `sorted` example, counting instead of testing);
needs the first element: not a homomorphism."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    c: Int = 0          # descents so far
    has: Bool = False   # the list is not empty
    last: Real = 0      # last element


def left(acc: State, x: Real) -> State:
    c = acc.c + 1 if acc.has and acc.last > x else acc.c
    return State(c, True, x)
