"""Runs of positive elements, eight fields: the longest run, the leading and trailing
runs, the length, the number of runs, the count and sum of the positives, the maximum.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), `count blocks` and `max block ones`, with
AutoLifter's lead/trail lifting, gathered in one state."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    best: Int = 0       # longest run of positives
    lead: Int = 0       # run of positives at the start
    trail: Int = 0      # run of positives at the end
    n: Int = 0          # length
    blocks: Int = 0     # number of runs of positives
    pos: Int = 0        # number of positives
    s: Real = 0         # sum of the positives
    hi: Real = -inf     # largest element


def left(acc: State, x: Real) -> State:
    p = x > 0
    trail = acc.trail + 1 if p else 0
    lead = acc.lead + 1 if p and acc.lead == acc.n else acc.lead
    blocks = acc.blocks + 1 if p and acc.trail == 0 else acc.blocks
    return State(max(acc.best, trail), lead, trail, acc.n + 1, blocks,
                 acc.pos + 1 if p else acc.pos, acc.s + x if p else acc.s, max(acc.hi, x))
