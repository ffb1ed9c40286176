"""Whether a list of bits is sorted (no 1 followed by a 0).

Source: PLDI 2021 regular-pattern loops ("is sorted"); the lift needs the first element,
which meets the left part's last one at the split."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    prev: Int = 0       # the last element (0 while empty)
    ok: Bool = True     # no element so far is below the one before it


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(x, acc.ok and x >= acc.prev)
