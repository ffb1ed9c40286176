"""Best score ending in state A or in state B, a (max, +) pair coupled by gap penalties, where every third step joins both states and reads the element with opposite signs.

Finite control (the step's phase `% 3`) with a 2 x 2 (max, +) step that depends on it.
Not a homomorphism; the copies lift holds the 2 x 2 matrix of the composed step from
each phase, less the two entries the fields themselves give (10 fields).  Source:
profile HMMs and pair alignment with position-specific gap costs (Durbin et al. 1998,
ch. 3), a periodic transition matrix."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    t: Int = 0
    a: Real = 0.0
    b: Real = float("-inf")


def left(acc: State, x: Real) -> State:
    t = (acc.t + 1) % 3
    if acc.t == 2:
        return State(t, max(acc.a, acc.b) + x, max(acc.a, acc.b) - x)
    return State(t, max(acc.a + x, acc.b - 1.0), max(acc.a - 1.0, acc.b - x))
