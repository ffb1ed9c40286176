"""Boyer-Moore majority vote: a candidate that is the majority element if there is one."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    cand: Real = 0  # current candidate
    count: Int = 0  # its unmatched votes


def left(acc: State, x: Real) -> State:
    if acc.count == 0:
        return State(x, 1)
    elif x == acc.cand:
        return State(acc.cand, acc.count + 1)
    else:
        return State(acc.cand, acc.count - 1)


def result(acc: State) -> Real:
    return acc.cand
