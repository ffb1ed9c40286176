"""The number of records: elements above every earlier element (left-to-right maxima).

Source: Knuth, TAOCP vol. 1, section 1.2.10 (the records of a permutation); thm3 issue
21's honest limits: a count of records above a threshold (the running maximum) has no
bounded lift."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m: Real = -inf  # the running maximum
    c: Int = 0      # records so far


def left(acc: State, x: Real) -> State:
    if x > acc.m:
        return State(x, acc.c + 1)
    return acc
