"""Two coupled accumulators with fixed weights: u' = 2 u + 3 v + x, v' = u - v.

Source: a second-order linear recurrence with constant coefficients written as a coupled
pair (a rotation-and-scale of the state, as in a resonator or a Fibonacci-like sequence
driven by an input; Blelloch 1990): the composed map is A**n for the constant matrix
A = [[2, 3], [1, -1]], two Cayley-Hamilton coefficients (A**2 = A + 5 I)."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    u: Real = 0
    v: Real = 0


def left(acc: State, x: Real) -> State:
    return State(2 * acc.u + 3 * acc.v + x, acc.u - acc.v)
