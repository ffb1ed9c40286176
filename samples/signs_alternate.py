"""Signs alternate: whether consecutive elements have opposite signs, keeping only the last one."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    ok: Bool = True     # the signs so far alternate
    last: Real = 0      # the last element (0 while empty)


def left(acc: State, x: Real) -> State:
    assert x != 0
    return State(acc.ok and acc.last * x <= 0, x)


def result(acc: State) -> Bool:
    return acc.ok
