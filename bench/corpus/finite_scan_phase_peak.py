"""A three-phase scanner: in phase 0 the held peak decays by the parameter `decay` and takes the reading, in phases 1 and 2 it holds and takes half the reading.

(max, *) on nonnegatives under a `% 3` phase, with a parameter's coefficient (its products
are powers the lift carries as slopes): the peak from phases 1 and 2 and the product from
each phase (5 fields).  Source: a rotating radar's per-sector peak hold; a three-stage
pipeline's worst latency with decay in one stage."""
from typing import NamedTuple
from thm3.lang import Int, Real


decay: Real     # the decay in phase 0, the same for every element


class State(NamedTuple):
    phase: Int = 0
    peak: Real = 0.0


def left(acc: State, x: Real) -> State:
    assert x >= 0
    assert 0 <= decay
    p = (acc.phase + 1) % 3
    if acc.phase == 0:
        return State(p, max(acc.peak * decay, x))
    return State(p, max(acc.peak, 0.5 * x))
