"""Viterbi over three hidden states, as the matrix of best log-scores: entry (i, j) is the
best score of a path from state i that ends in state j, m' = m (x) (T + e) over (max, +).

Source: the HMM forward pass in max-product form (Rabiner 1989), as a product of (max, +)
matrices (Blelloch 1990); nine fields, each with a -inf case: the laws over three states
split on 2**18 infinite cases, the composition lemma over one (thm3 issue 21)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m00: Real = 0
    m01: Real = float("-inf")
    m02: Real = float("-inf")
    m10: Real = float("-inf")
    m11: Real = 0
    m12: Real = float("-inf")
    m20: Real = float("-inf")
    m21: Real = float("-inf")
    m22: Real = 0


def left(acc: State, e0: Real, e1: Real, e2: Real) -> State:
    return State(max(acc.m00 + 0, acc.m01 + -2, acc.m02 + -1) + e0,
                 max(acc.m00 + -1, acc.m01 + 0, acc.m02 + -2) + e1,
                 max(acc.m00 + -3, acc.m01 + -1, acc.m02 + 0) + e2,
                 max(acc.m10 + 0, acc.m11 + -2, acc.m12 + -1) + e0,
                 max(acc.m10 + -1, acc.m11 + 0, acc.m12 + -2) + e1,
                 max(acc.m10 + -3, acc.m11 + -1, acc.m12 + 0) + e2,
                 max(acc.m20 + 0, acc.m21 + -2, acc.m22 + -1) + e0,
                 max(acc.m20 + -1, acc.m21 + 0, acc.m22 + -2) + e1,
                 max(acc.m20 + -3, acc.m21 + -1, acc.m22 + 0) + e2)
