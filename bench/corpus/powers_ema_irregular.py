"""An exponential moving sum on irregularly timed samples: v decays by exp(-0.5 dt).

Affine over (+, *) with the coefficient exp(-0.5 dt): over b's list it is exp(-0.5 b.t),
the exponential of the elapsed time b keeps, and the combine is exp(-0.5 * b.t) * a.v +
b.v.  Source: time-decayed counters for irregular event streams."""
from typing import NamedTuple
from thm3.lang import Real, exp


class State(NamedTuple):
    v: Real = 0.0
    t: Real = 0.0


def left(acc: State, dt: Real, x: Real) -> State:
    return State(acc.v * exp(-0.5 * dt) + x, acc.t + dt)
