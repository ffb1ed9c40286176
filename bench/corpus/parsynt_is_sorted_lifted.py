"""Is the list sorted, lifted with the first element and an emptiness flag.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), `is sorted` after lifting; Synduce's `is_sorted`."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    has: Bool = False   # the list is not empty
    first: Real = 0     # first element (0 while empty)
    last: Real = 0      # last element (0 while empty)
    ok: Bool = True     # sorted so far


def left(acc: State, x: Real) -> State:
    if acc.has:
        return State(True, acc.first, x, acc.ok and x >= acc.last)
    else:
        return State(True, x, x, True)
