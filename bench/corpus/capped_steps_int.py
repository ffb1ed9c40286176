"""Steps of 1 to 3 counted in an Int, saturating at a cap: n = min(n + x, cap + 2).

Source: saturating counters (hardware performance counters; Morita et al., PLDI 2007's
clipped sums) with Int steps; the laws need the range 0 <= n <= cap + 2."""
from typing import NamedTuple
from thm3.lang import Int

cap: Int


class State(NamedTuple):
    n: Int = 0      # min(sum, cap + 2)


def left(acc: State, x: Int) -> State:
    assert 1 <= x and x <= 3
    assert cap >= 0
    return State(min(acc.n + x, cap + 2))
