"""Diagonal state-space-model scan with the slopes kept: (h_i, A_i**n), the composition of affine maps.

Source: Smith, Warrington & Linderman, "Simplified state space layers for sequence
modeling" (S5, ICLR 2023), the associative scan over (A**n, h) pairs."""
from typing import NamedTuple
from thm3.lang import Real

A1: Real        # decay of channel 1
A2: Real        # decay of channel 2


class State(NamedTuple):
    h1: Real = 0    # channel 1
    h2: Real = 0    # channel 2
    p1: Real = 1    # A1 ** (number of elements so far)
    p2: Real = 1    # A2 ** (number of elements so far)


def left(acc: State, u: Real) -> State:
    return State(A1 * acc.h1 + u, A2 * acc.h2 + 2 * u, acc.p1 * A1, acc.p2 * A2)
