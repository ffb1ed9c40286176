"""Two-state Viterbi in probability space (no logs): fixed transitions, Gaussian-shaped
emissions.

Homogeneous over (max, *) on nonnegatives (the scores start at 1 and 0 and every
coefficient is nonnegative): the state is the first column of the product of the step
matrices, and the lift adds the other column, two fields, with the matrix product as the
combine.  Source: Rabiner (Proc. IEEE 1989), the Viterbi recursion before the log."""
from typing import NamedTuple
from thm3.lang import Real, exp


class State(NamedTuple):
    p0: Real = 1.0
    p1: Real = 0.0


def left(acc: State, x: Real) -> State:
    e0 = exp(-x * x)
    e1 = exp(-(x - 1.0) * (x - 1.0))
    return State(max(acc.p0 * 0.9, acc.p1 * 0.2) * e0, max(acc.p0 * 0.1, acc.p1 * 0.8) * e1)
