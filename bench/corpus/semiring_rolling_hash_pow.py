"""Polynomial rolling hash with the base's power kept: (h, B**n mod p) over (+, *) mod p.

Source: Karp & Rabin (IBM J. Res. Dev. 1987); the power is the slope of the composed
affine map h -> B * h + x (mod p)."""
from typing import NamedTuple
from thm3.lang import Int

B: Int          # the base


class State(NamedTuple):
    h: Int = 0      # hash of the list so far
    pw: Int = 1     # B ** (number of elements so far) mod p


def left(acc: State, x: Int) -> State:
    return State((acc.h * B + x) % 1000003, (acc.pw * B) % 1000003)
