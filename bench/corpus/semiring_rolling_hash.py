"""Polynomial rolling hash h' = (h * B + x) mod p: not a homomorphism without B**n mod p.

Source: Karp & Rabin, "Efficient randomized pattern-matching algorithms" (IBM J. Res. Dev.
1987); the parallel form joins two hashes as h1 * B**n2 + h2 (mod p)."""
from typing import NamedTuple
from thm3.lang import Int

B: Int          # the base


class State(NamedTuple):
    h: Int = 0      # hash of the list so far


def left(acc: State, x: Int) -> State:
    return State((acc.h * B + x) % 1000003)
