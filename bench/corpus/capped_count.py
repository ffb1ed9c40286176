"""A count capped by a loop parameter: n = min(n + 1, cap).

Source: issue 15, item 2 (invariants with loop parameters: n <= cap)."""
from typing import NamedTuple
from thm3.lang import Int, Real

cap: Int        # the cap


class State(NamedTuple):
    n: Int = 0      # min(len, cap)


def left(acc: State, x: Real) -> State:
    assert cap >= 0
    return State(min(acc.n + 1, cap))
