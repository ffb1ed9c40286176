"""An envelope follower on irregularly timed samples: the held peak decays by exp(-dt)
over each gap dt, and the elapsed time is kept.

(max, *) with an element's coefficient exp(-dt), nonnegative from its form: over b's list
the product is exp(-(sum of dt)) = exp(-b.t), read off b's elapsed time, and the combine
is max(exp(-b.t) * a.peak, b.peak); the proof uses exp(u + v) == exp(u) * exp(v).
Source: audio envelope followers, event-time peak tracking."""
from typing import NamedTuple
from thm3.lang import Real, exp


class State(NamedTuple):
    peak: Real = 0.0
    t: Real = 0.0


def left(acc: State, dt: Real, x: Real) -> State:
    assert dt >= 0
    return State(max(acc.peak * exp(-dt), x), acc.t + dt)
