"""Decayed sum s' = c s + x with a parameter c: not a homomorphism without c**n.

Source: exponential decay of event counts (Cormode, Shkapenyuk, Srivastava & Xu, "Forward
decay", ICDE 2009): a block's sum is scaled by c to the length of what follows it."""
from typing import NamedTuple
from thm3.lang import Real

c: Real         # the decay per element


class State(NamedTuple):
    s: Real = 0     # the decayed sum


def left(acc: State, x: Real) -> State:
    return State(c * acc.s + x)
