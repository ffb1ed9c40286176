"""Euclidean norm without overflow: LAPACK's scaled sum of squares.

Source: LAPACK dnrm2 / dlassq (scale = max |x|, ssq = sum of (|x| / scale)**2; the
norm is scale * sqrt(ssq)); issue 14."""
from typing import NamedTuple
from thm3.lang import Real, sqrt


class State(NamedTuple):
    scale: Real = 0     # largest |x| so far
    ssq: Real = 1       # sum of squares relative to scale**2


def left(acc: State, x: Real) -> State:
    ax = abs(x)
    if ax > acc.scale:
        return State(ax, 1 + acc.ssq * (acc.scale / ax) ** 2)
    elif ax > 0:
        return State(acc.scale, acc.ssq + (ax / acc.scale) ** 2)
    else:
        return acc


def result(acc: State) -> Real:
    return acc.scale * sqrt(acc.ssq)
