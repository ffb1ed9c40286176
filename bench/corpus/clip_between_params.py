"""A running sum clipped to [L, U] at every step (a two-sided clamp with parameter bounds).

Source: Morita, Morihata, Matsuzaki, Hu and Takeichi, PLDI 2007 (clipped sums); a
saturating accumulator (a fixed-point DSP accumulator, an inventory capped by storage).
Not a homomorphism over the clipped value alone; the list's map of any start is
c -> min(max(c + s, lo), hi), with s the sum, lo what it makes of -inf and hi of +inf: the
lift adds those three, the same update started at -inf and at +inf."""
from typing import NamedTuple
from thm3.lang import Real

L: Real     # the lower bound
U: Real     # the upper bound


class State(NamedTuple):
    c: Real = 0     # the clipped sum


def left(acc: State, x: Real) -> State:
    assert L <= 0 and 0 <= U
    return State(min(max(acc.c + x, L), U))
