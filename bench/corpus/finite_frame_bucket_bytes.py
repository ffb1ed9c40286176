"""A token bucket of three, refilled by one token an element: a frame of up to 64 bytes costs one token, a larger one two; the frames sent and dropped are counted and the bytes sent summed.

Source: rate limiters (token buckets that charge by size class).  The level is control (4
states), the counts and the byte sum data.  No combine over the state exists, and the
witness needs two large frames that differ: h([65, 67]) == h([67, 65]), but after [65] the
bucket is short and sends only the first of them, so the bytes sent differ.  With one value
above 64 among the elements tried, the sum from each level looked like a constant
offset of b's."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    tokens: Int = 3
    green: Int = 0
    red: Int = 0
    green_bytes: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    t = min(acc.tokens + 1, 3)
    cost = 1 if x <= 64 else 2
    if t >= cost:
        return State(t - cost, acc.green + 1, acc.red, acc.green_bytes + x)
    return State(t, acc.green, acc.red + 1, acc.green_bytes)
