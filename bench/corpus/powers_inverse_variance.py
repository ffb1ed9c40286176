"""Inverse-variance weighting: measurements x with variances s fused into one estimate m
with variance v (the fixed-effect meta-analysis, a Kalman update of a constant).

Source: Hartung, Knapp & Sinha, "Statistical Meta-Analysis with Applications" (2008),
the fixed-effect estimate; issue 21's "combines through reciprocals" class: the precision
1 / v and m / v add up."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    v: Real = 0     # the variance of the fused estimate (0 while there is none)
    m: Real = 0     # the fused estimate


def left(acc: State, x: Real, s: Real) -> State:
    assert s > 0
    if acc.v == 0:
        return State(s, x)
    return State(acc.v * s / (acc.v + s), (acc.m * s + x * acc.v) / (acc.v + s))
