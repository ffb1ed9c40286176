"""Fletcher-16 checksum (two running sums mod 255): not a homomorphism without the length.

Source: Fletcher, "An arithmetic checksum for serial transmissions" (IEEE Trans. Commun.
1982); RFC 1146: joining two blocks needs the second block's length."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    s1: Int = 0     # sum of the bytes mod 255
    s2: Int = 0     # sum of the s1's mod 255


def left(acc: State, x: Int) -> State:
    s1 = (acc.s1 + x) % 255
    return State(s1, (acc.s2 + s1) % 255)
