"""A polynomial hash of bits modulo a small prime, h' = (3 h + x) mod 7: not a homomorphism over h.

Source: checksums and rolling hashes (Karp & Rabin 1987) with a modulus small enough for
the state to be a transition table: 7 states, affine maps mod 7; the lift needs the
slope 3 ** n mod 7 of the composed map, in place of a copy of h from another start."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    h: Int = 0      # the hash of the bits so far, mod 7


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State((acc.h * 3 + x) % 7)
