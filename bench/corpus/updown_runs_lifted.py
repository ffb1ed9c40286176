"""Longest strictly increasing and strictly decreasing runs, nine fields: for each
direction the longest, leading and trailing run, then the length, first and last.

Source: AutoLifter (Ji et al.), benchmark `lis` with its lifting, taken to both
directions at once (the `longest monotone run` of Parsynt's suite)."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    best_up: Int = 0    # longest increasing run
    lead_up: Int = 0
    trail_up: Int = 0
    best_dn: Int = 0    # longest decreasing run
    lead_dn: Int = 0
    trail_dn: Int = 0
    n: Int = 0          # length
    first: Real = 0     # first element (0 while empty)
    last: Real = 0      # last element (0 while empty)


def left(acc: State, x: Real) -> State:
    if acc.n == 0:
        return State(1, 1, 1, 1, 1, 1, 1, x, x)
    up = x > acc.last
    dn = x < acc.last
    tu = acc.trail_up + 1 if up else 1
    lu = acc.lead_up + 1 if up and acc.lead_up == acc.n else acc.lead_up
    td = acc.trail_dn + 1 if dn else 1
    ld = acc.lead_dn + 1 if dn and acc.lead_dn == acc.n else acc.lead_dn
    return State(max(acc.best_up, tu), lu, tu, max(acc.best_dn, td), ld, td, acc.n + 1, acc.first, x)
