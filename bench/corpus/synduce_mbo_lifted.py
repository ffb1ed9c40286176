"""Longest block of ones with the leading run and an all-ones flag.

Source: Synduce (PLDI 2022), benchmark `mbo` (max block of ones) with its lifting."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    best: Int = 0       # longest block
    cur: Int = 0        # run of ones at the end
    lead: Int = 0       # run of ones at the start
    full: Bool = True   # every bit so far is a one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if x == 1:
        cur = acc.cur + 1
        return State(max(acc.best, cur), cur, acc.lead + 1 if acc.full else acc.lead, acc.full)
    else:
        return State(acc.best, 0, acc.lead, False)
