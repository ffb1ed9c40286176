"""The longest run of equal consecutive values.

Source: run-length statistics (the longest streak of one outcome; Parsynt, PLDI 2017, and
AutoLifter's `lis`-style lifts): not a homomorphism over (last, cur, best), since the
current run may continue into the right part.  The lift adds the first element, whether
the whole list is one run (every element after the first equals the one before) and the
length of the leading run, which joins the left part's trailing run at the split."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    last: Real = inf    # the previous value (inf while empty)
    cur: Int = 0        # the length of the current run
    best: Int = 0       # the longest run so far


def left(acc: State, x: Real) -> State:
    cur = acc.cur + 1 if x == acc.last else 1
    return State(x, cur, max(acc.best, cur))
