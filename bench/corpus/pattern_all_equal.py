"""Are all elements equal? Kept with the first element and a flag.

Source: PLDI 2021 regular-pattern loops (`a*` for the first letter a)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    has: Bool = False   # the list is not empty
    first: Real = 0     # first element
    ok: Bool = True     # every element equals the first


def left(acc: State, x: Real) -> State:
    if acc.has:
        return State(True, acc.first, acc.ok and x == acc.first)
    return State(True, x, True)
