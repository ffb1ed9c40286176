"""Rolling hash of the absolute values with the base's power kept: (h, B**n mod p).

Source: Karp & Rabin (IBM J. Res. Dev. 1987); the power is the slope of the composed
affine map h -> B * h + |x| (mod p).  Its laws need integer reasoning for `%`: the
remainder of |x| inside (h * B + |x|) % p is congruent to |x| itself."""
from typing import NamedTuple
from thm3.lang import Int

B: Int          # the base


class State(NamedTuple):
    h: Int = 0      # hash of the magnitudes so far
    pw: Int = 1     # B ** (number of elements so far) mod p


def left(acc: State, x: Int) -> State:
    v = x if x > 0 else -x
    return State((acc.h * B + v) % 1000003, (acc.pw * B) % 1000003)
