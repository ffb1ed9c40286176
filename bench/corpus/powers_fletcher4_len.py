"""Four running sums mod 65521 with the length kept: the join reads binomials of the length.

Source: the Fletcher/Adler family (RFC 1950, section 8.2, for the modulus 65521); the k-th
running sum of a block shifts the (k-j)-th sum of the block before it by C(n + j - 1, j),
n the second block's length: polynomials in n of degree up to 3, with 1/2 and 1/6 taken
mod the prime 65521."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    n: Int = 0      # number of elements
    s1: Int = 0
    s2: Int = 0
    s3: Int = 0
    s4: Int = 0


def left(acc: State, x: Int) -> State:
    s1 = (acc.s1 + x) % 65521
    s2 = (acc.s2 + s1) % 65521
    s3 = (acc.s3 + s2) % 65521
    return State(acc.n + 1, s1, s2, s3, (acc.s4 + s3) % 65521)
