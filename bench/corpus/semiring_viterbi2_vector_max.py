"""Two-state HMM max-product (Viterbi) scores from state 0, written with max(): the twin of semiring_viterbi2_vector.

Source: Rabiner (Proc. IEEE 1989), the Viterbi recursion in log space."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    v0: Real = 0        # best log score of a path ending in state 0
    v1: Real = -inf     # best log score of a path ending in state 1


def left(acc: State, e0: Real, e1: Real) -> State:
    return State(max(acc.v0, acc.v1 - 1) + e0, max(acc.v0 - 2, acc.v1) + e1)
