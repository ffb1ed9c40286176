"""A token bucket of five: a positive element is a packet, sent while a token is left (its size summed, the packets counted) and dropped otherwise; any other element adds a token.

Source: rate limiters (the token bucket of traffic shaping): a saturating level 0..5 as
control, with two sums and a count as data.  The count steers nothing (no condition reads
it), so it is data, not control: the lifted loop then has 61 reachable control states (the
bucket's transition functions), where read as control with the level it had past 256.  Its
composition lift copies the level from the five other levels and the three data fields
from each (20 fields; 15 where dropped is read as sent + dropped less sent)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    tokens: Int = 5
    sent: Real = 0
    dropped: Real = 0
    n: Int = 0


def left(acc: State, x: Real) -> State:
    if x > 0:
        if acc.tokens > 0:
            return State(acc.tokens - 1, acc.sent + x, acc.dropped, acc.n + 1)
        return State(0, acc.sent, acc.dropped + x, acc.n)
    return State(min(acc.tokens + 1, 5), acc.sent, acc.dropped, acc.n)
