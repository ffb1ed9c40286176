"""Two modes, each with its own decayed sum and count, the decay p a loop parameter: an
element (flip, x) with flip 1 switches the mode; otherwise x enters the active mode's sum,
which decays by p a step, while the other mode's stands still.

Finite control (the mode) with linear data: the combine composes b's maps from a's mode,
and the decay of b's list in a mode is a power of b's count of steps in it (p ** b.n0
where a ends in mode 0, p ** b.n1 where a ends in mode 1 and b's list ran in its other
mode).  Source: a double-buffered statistic (two staging buffers taking turns)."""
from typing import NamedTuple
from thm3.lang import Int, Real


p: Real         # the decay, in (0, 1)


class State(NamedTuple):
    mode: Int = 0
    a: Real = 0     # mode 0's decayed sum
    b: Real = 0     # mode 1's
    n0: Int = 0     # elements that entered mode 0's average
    n1: Int = 0


def left(acc: State, flip: Int, x: Real) -> State:
    assert 0 <= flip <= 1 and 0 < p < 1
    if flip == 1:
        return acc._replace(mode=1 - acc.mode)
    if acc.mode == 0:
        return acc._replace(a=p * acc.a + x, n0=acc.n0 + 1)
    return acc._replace(b=p * acc.b + x, n1=acc.n1 + 1)
