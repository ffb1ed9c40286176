"""The two most recent distinct values of a stream of ids (a two-entry recency list).

Source: the most-recently-used list of a cache or a "recent items" widget, keeping the
last two distinct ids; -1 marks an empty slot, and ids are >= 0.  The state is its own
short list only by cases: none, one or two ids so far, so the combine folds b's ids into
a by how many b holds (a weak right inverse by cases, Morita et al., PLDI 2007)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    r1: Int = -1      # the most recent distinct id
    r2: Int = -1      # the one before it


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if x == acc.r1:
        return acc
    return State(x, acc.r1)
