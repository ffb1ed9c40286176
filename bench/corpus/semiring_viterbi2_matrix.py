"""Two-state HMM max-product (Viterbi) in log space, kept as the (max, +) product of the step matrices.

Source: Rabiner, "A tutorial on hidden Markov models" (Proc. IEEE 1989), the Viterbi
recursion v_i' = max_j (v_j + log T_ij) + e_i; Maleki, Musuvathi & Mytkowicz, "Parallelizing
dynamic programming through rank convergence" (PPoPP 2014): tropical matrix products."""
from typing import NamedTuple
from thm3.lang import Real, inf


class State(NamedTuple):
    m00: Real = 0       # the (max, +) product of the step matrices, row-major
    m01: Real = -inf
    m10: Real = -inf
    m11: Real = 0


def left(acc: State, e0: Real, e1: Real) -> State:
    # step matrix [[e0, e0 - 1], [e1 - 2, e1]]: staying is free, moving costs 1 or 2
    return State(max(acc.m00, acc.m10 - 1) + e0, max(acc.m01, acc.m11 - 1) + e0,
                 max(acc.m00 - 2, acc.m10) + e1, max(acc.m01 - 2, acc.m11) + e1)
