"""Three running sums mod 251 without the length: the length is the one field to add.

Source: as powers_fletcher3_len (Fletcher 1982; RFC 1146): every entry of the composed
map of the constant step matrix is a polynomial in the length (1, n, n (n + 1) / 2 mod
251), so the length alone carries the map."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    s1: Int = 0
    s2: Int = 0
    s3: Int = 0


def left(acc: State, x: Int) -> State:
    s1 = (acc.s1 + x) % 251
    s2 = (acc.s2 + s1) % 251
    return State(s1, s2, (acc.s3 + s2) % 251)
