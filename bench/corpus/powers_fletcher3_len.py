"""A third running sum mod 251 with the length kept (a Fletcher checksum one level deeper).

Source: Fletcher, "An arithmetic checksum for serial transmissions" (IEEE Trans. Commun.
1982), and RFC 1146 for the join with the second block's length; the third sum's join
needs the length's triangular number: s3 = s3a + s3b + n s2a + n (n + 1) / 2 s1a (mod 251),
with n the second block's length and 1/2 taken mod 251 (the inverse of 2 is 126)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    s1: Int = 0     # sum of the bytes mod 251
    s2: Int = 0     # sum of the s1's mod 251
    s3: Int = 0     # sum of the s2's mod 251
    n: Int = 0      # number of bytes


def left(acc: State, x: Int) -> State:
    s1 = (acc.s1 + x) % 251
    s2 = (acc.s2 + s1) % 251
    return State(s1, s2, (acc.s3 + s2) % 251, acc.n + 1)
