"""A hit count capped at C, with a flag for "the cap was reached": s = min(s + x, C) on x > 0.

Source: saturating event counters with an overflow flag (hardware performance counters,
rate limiters), with no assumption on C: for C = 0 the flag is "an element came", for
C < 0 the first positive x pins s at C.  The laws are proved by cases on C."""
from typing import NamedTuple
from thm3.lang import Bool, Int

C: Int          # the cap


class State(NamedTuple):
    s: Int = 0          # the capped count
    hit: Bool = False   # s reached C at some step


def left(acc: State, x: Int) -> State:
    if x > 0:
        s = min(acc.s + x, C)
    else:
        s = acc.s
    return State(s, acc.hit or s == C)
