"""Worst severity (an Int level) logged during outages: 100 starts an outage, 101 ends it.

Source: issue 21, an Int (max, +) field and a count, gated by a mode the element sets."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    outage: Bool = False
    worst: Int = 0
    outages: Int = 0


def left(acc: State, x: Int) -> State:
    if x == 100:
        return State(True, acc.worst, acc.outages + (0 if acc.outage else 1))
    if x == 101:
        return State(False, acc.worst, acc.outages)
    return State(acc.outage, max(acc.worst, x) if acc.outage else acc.worst, acc.outages)
