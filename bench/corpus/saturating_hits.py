"""A saturating counter of hits clamped to [0, K], with its "saturated" flag and the
number of events: c = min(c + x, K) for counts x >= 0.

Source: saturating counters (hardware performance counters, token buckets that fill up;
Morita et al., PLDI 2007's clipped sums).  The laws need the range invariant 0 <= c <= K
and that the flag is c == K, which holds for K >= 1 only (for K = 0 the empty counter is
already at K, unflagged)."""
from typing import NamedTuple
from thm3.lang import Bool, Int

K: Int


class State(NamedTuple):
    c: Int = 0          # min(hits, K)
    full: Bool = False  # the counter reached K
    n: Int = 0          # events seen


def left(acc: State, x: Int) -> State:
    assert x >= 0
    assert K >= 1
    return State(min(acc.c + x, K), acc.full or acc.c + x >= K, acc.n + 1)
