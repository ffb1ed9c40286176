"""A peak meter frozen by a sticky stop; the live ticks are counted.

(max, *) on nonnegatives under a sticky flag, a homomorphism as written: once a is stopped
b adds nothing, else b's peak joins a's decayed by 0.9 ** b.ticks, a power of b's count
read off sampled lists.  Source: a training-loss spike meter frozen at early stopping."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    stopped: Bool = False
    peak: Real = 0.0
    ticks: Int = 0


def left(acc: State, x: Real, stop: Bool) -> State:
    assert x >= 0
    s = acc.stopped or stop
    if s:
        return State(True, acc.peak, acc.ticks)
    return State(False, max(acc.peak * 0.9, x), acc.ticks + 1)
