"""A peak meter with a program-dependent release: a quiet sample (below 0.1) halves the held peak, a loud one keeps 0.9 of it; both kinds are counted.

(max, *) on nonnegatives, a homomorphism as written: after b's list a's peak has decayed
by 0.5 ** b.quiet_n * 0.9 ** b.loud_n, a product of powers of two counts, read off sampled
lists by least squares on the logarithms.  Source: broadcast loudness meters (EBU R128
gating) with two release rates."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    peak: Real = 0.0
    quiet_n: Int = 0
    loud_n: Int = 0


def left(acc: State, x: Real) -> State:
    assert x >= 0
    q = x < 0.1
    return State(max(acc.peak * (0.5 if q else 0.9), x), acc.quiet_n + (1 if q else 0),
                 acc.loud_n + (0 if q else 1))
