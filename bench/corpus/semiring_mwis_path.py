"""Maximum-weight independent set on a path: (best with the last vertex in, best with it out), over (max, +).

Source: Kleinberg & Tardos, "Algorithm Design" (2005), section 6.1 (weighted independent set
on a path); AutoLifter's `mis` benchmark (Ji et al., 2023): not a homomorphism without the
best values from the other end state, the other column of the (max, +) step product."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    inc: Real = -inf    # best weight of an independent set that takes the last vertex
    exc: Real = 0       # best weight of one that does not


def left(acc: State, x: Real) -> State:
    return State(acc.exc + x, max(acc.inc, acc.exc))
