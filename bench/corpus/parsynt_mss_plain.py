"""Maximum segment sum as Kadane writes it: not a homomorphism over (best, tail).

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `mss` before lifting."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m: Real = 0     # best segment sum
    t: Real = 0     # best tail sum


def left(acc: State, x: Real) -> State:
    t = max(acc.t + x, 0)
    return State(max(acc.m, t), t)
