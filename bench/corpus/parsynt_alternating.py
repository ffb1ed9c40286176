"""Do the signs alternate? Not a homomorphism without the first element.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `alternating`."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    ok: Bool = True     # signs alternate so far
    last: Real = 0      # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    assert x != 0
    ok = acc.ok and (acc.last == 0 or (x > 0) != (acc.last > 0))
    return State(ok, x)
