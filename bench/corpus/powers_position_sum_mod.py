"""The sum of position times value mod 97 (a position-weighted checksum): it needs the sum.

Source: position-weighted checksums (the ISBN-10 and Luhn family weight each digit by its
place); joining two blocks shifts the second block's positions by the first's length,
s = s_a + s_b + n_a * sum_b (mod 97), so the plain sum of the values is the field to add."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    n: Int = 0      # number of elements: the next position
    s: Int = 0      # sum of position * value, mod 97


def left(acc: State, x: Int) -> State:
    return State(acc.n + 1, (acc.s + acc.n * x) % 97)
