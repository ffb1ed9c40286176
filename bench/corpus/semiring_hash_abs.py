"""Rolling hash of the absolute values, h' = (h * B + |x|) mod p: not a homomorphism without B**n mod p.

Source: Karp & Rabin (IBM J. Res. Dev. 1987), over a key folded to its magnitude by an
if/else on its sign; the parallel form joins two hashes as h1 * B**n2 + h2 (mod p)."""
from typing import NamedTuple
from thm3.lang import Int

B: Int          # the base


class State(NamedTuple):
    h: Int = 0      # hash of the magnitudes so far


def left(acc: State, x: Int) -> State:
    if x > 0:
        v = x
    else:
        v = -x
    return State((acc.h * B + v) % 1000003)
