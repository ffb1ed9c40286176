"""Adler-32 checksum with the length kept: a = 1 + sum, b = sum of the a's, both mod 65521.

Source: RFC 1950 (ZLIB format), section 8.2; zlib's adler32_combine joins two checksums
with the second part's length: b = b1 + b2 + n2 * (a1 - 1)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    a: Int = 1      # 1 + the sum of the bytes, mod 65521
    b: Int = 0      # the sum of the a's, mod 65521
    n: Int = 0      # number of bytes


def left(acc: State, x: Int) -> State:
    a = (acc.a + x) % 65521
    return State(a, (acc.b + a) % 65521, acc.n + 1)
