"""Decimal digits after the point, only those flagged valid: v = sum of d_k 0.1 ** (k + 1)
over the valid digits, k counting them.

A count that steps only on valid digits, and a power of it in the step: read as a field,
the step is affine, and the combine is a.v + b.v * 0.1 ** a.k.  Source: parsing a decimal
fraction that skips separators."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    v: Real = 0.0
    k: Int = 0


def left(acc: State, ok: Int, d: Int) -> State:
    assert 0 <= ok <= 1 and 0 <= d <= 9
    if ok == 1:
        return State(acc.v + d * 0.1 ** (acc.k + 1), acc.k + 1)
    return acc
