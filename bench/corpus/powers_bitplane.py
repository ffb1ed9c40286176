"""A binary fraction read digit by digit, most significant first: v = sum of bit_k 2 ** -(k + 1).

The step reads the state through a power of its count, 2.0 ** -(acc.k + 1): with P =
2.0 ** -k as a field, P' = 0.5 * P, the step is affine over (+, *), and the composition
v = a.v + P_a * b.v is written back as a.v + b.v * 2.0 ** -a.k.  Source: bit-plane
coding (JPEG 2000), successive-approximation ADCs."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    v: Real = 0.0
    k: Int = 0


def left(acc: State, bit: Int) -> State:
    assert 0 <= bit <= 1
    return State(acc.v + bit * 2.0 ** -(acc.k + 1), acc.k + 1)
