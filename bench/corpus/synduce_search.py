"""Does the list contain the key?

Source: Synduce (PLDI 2022), benchmark `search`."""
from typing import NamedTuple
from thm3.lang import Bool, Real

key: Real       # the value looked for


class State(NamedTuple):
    found: Bool = False     # the key has been seen


def left(acc: State, x: Real) -> State:
    return State(acc.found or x == key)
