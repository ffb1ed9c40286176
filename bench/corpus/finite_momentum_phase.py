"""Position and velocity under a force, with friction that alternates with the step's parity: a 2 x 2 affine (+, *) step chosen by a `% 2` phase.

Finite control with coupled linear data.  Not a homomorphism; the copies lift holds both
fields from phase 1 and the velocity's column of the composed matrix from each phase (6
fields).  Source: symplectic and split-step integrators (Leimkuhler and Reich 2004),
whose half steps alternate."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    k: Int = 0
    pos: Real = 0.0
    vel: Real = 0.0


def left(acc: State, f: Real) -> State:
    if acc.k == 0:
        return State(1, acc.pos + acc.vel, 0.9 * acc.vel + f)
    return State(0, acc.pos + 0.5 * acc.vel, 0.5 * acc.vel + f)
