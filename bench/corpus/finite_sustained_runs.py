"""Sustained load: the runs of five or more positive readings in a row, each counted when it reaches five; the first and last class with their run lengths capped at five are kept, so blocks join.

Source: alerting on sustained conditions (a metric above its threshold for five samples
in a row), written to be merged across shards.  The classes, the capped run lengths and
the one-run flag are control (111 reachable states, past the finite route's first bound
of 64), the count data.  Read with the bound of 64 the run lengths were taken for data
(they take values no constant names before the count grows), and they are not affine: the
count, which interval reasoning leaves unbounded, is data first now, and the route reads
the loop again with a larger bound.  Its combine adds the counts and corrects by the run
the blocks share."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    first: Int = 0      # 0 none yet, 1 not positive, 2 positive
    lead: Int = 0       # the first run's length, capped at 5
    whole: Bool = True  # one run so far
    last: Int = 0
    trail: Int = 0      # the last run's length, capped at 5
    long: Int = 0       # runs of positive readings that reached five


def left(acc: State, x: Real) -> State:
    c = 2 if x > 0 else 1
    if acc.first == 0:
        return State(c, 1, True, c, 1, 0)
    if c == acc.last:
        lead = min(acc.lead + 1, 5) if acc.whole else acc.lead
        bump = 1 if c == 2 and acc.trail == 4 else 0
        return State(acc.first, lead, acc.whole, c, min(acc.trail + 1, 5), acc.long + bump)
    return State(acc.first, acc.lead, False, c, 1, acc.long)
