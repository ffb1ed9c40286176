"""Diagonal state-space-model scan, two channels: h_i' = A_i h_i + B_i u, not a homomorphism without A_i**n.

Source: Gu & Dao, "Mamba: Linear-time sequence modeling with selective state spaces" (2023),
and S4/S5's diagonal scans (Smith et al., ICLR 2023): the parallel scan composes the
affine maps h -> A h + B u, whose slopes are the powers A**n."""
from typing import NamedTuple
from thm3.lang import Real

A1: Real        # decay of channel 1
A2: Real        # decay of channel 2


class State(NamedTuple):
    h1: Real = 0    # channel 1
    h2: Real = 0    # channel 2


def left(acc: State, u: Real) -> State:
    return State(A1 * acc.h1 + u, A2 * acc.h2 + 2 * u)
