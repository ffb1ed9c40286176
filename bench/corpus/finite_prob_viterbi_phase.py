"""A two-state HMM's best path probabilities (no logs), with transitions that alternate between a sticky matrix and a uniform one by the step's parity.

(max, *) on nonnegatives, a 2 x 2 coupled pair under a `% 2` phase, with the emissions pa,
pb as coefficients.  Not a homomorphism; the copies lift is the other column of the
product from phase 0 and the whole product from phase 1 (6 fields), whose laws the prover
does not reach within 60 s (nonlinear arithmetic on every path of the maxima).  Source:
Rabiner (Proc. IEEE 1989), the Viterbi recursion before the log, with a periodic
transition matrix."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    phase: Int = 0
    a: Real = 1.0
    b: Real = 0.0


def left(acc: State, pa: Real, pb: Real) -> State:
    assert pa >= 0
    assert pb >= 0
    if acc.phase == 0:
        return State(1, max(acc.a * 0.9, acc.b * 0.2) * pa, max(acc.a * 0.1, acc.b * 0.8) * pb)
    return State(0, max(acc.a * 0.5, acc.b * 0.5) * pa, max(acc.a * 0.5, acc.b * 0.5) * pb)
