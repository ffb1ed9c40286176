"""The number of elements below the first element.

Source: thm3 issue 21's honest limits (a count of elements below the first); the
"rank of the first element" of quickselect's partition step (Hoare, 1961)."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    first: Real = 0     # the first element (0 while empty)
    has: Bool = False   # nonempty
    c: Int = 0          # later elements below the first


def left(acc: State, x: Real) -> State:
    if not acc.has:
        return State(x, True, 0)
    if x < acc.first:
        return acc._replace(c=acc.c + 1)
    return acc
