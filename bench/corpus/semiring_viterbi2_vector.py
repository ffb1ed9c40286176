"""Two-state HMM max-product (Viterbi) scores from state 0: not a homomorphism on the scores alone.

Source: Rabiner (Proc. IEEE 1989), the Viterbi recursion in log space; the lift adds the
scores from state 1 (the other column of the (max, +) product of the step matrices)."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    v0: Real = 0        # best log score of a path ending in state 0
    v1: Real = -inf     # best log score of a path ending in state 1


def left(acc: State, e0: Real, e1: Real) -> State:
    if acc.v0 > acc.v1 - 1:
        w0 = acc.v0 + e0
    else:
        w0 = acc.v1 - 1 + e0
    return State(w0, max(acc.v0 - 2, acc.v1) + e1)
