"""Two modes, each with its own decayed average and count: an element (flip, x) with
flip 1 switches the mode; otherwise x enters the active mode's average, which decays by
0.5 in mode 0 and by 0.8 in mode 1, while the other mode's stands still.

Not a homomorphism over this state: b's elements decay by 0.8 where b starts in mode 1
and by 0.5 where a's mode turns them to mode 0, and b's state keeps only one of the two
sums.  The twin of powers_two_mode_decay, whose modes decay alike.  Source: written for
this corpus, the skewed form of a double-buffered statistic."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    mode: Int = 0
    a: Real = 0     # mode 0's decayed average
    b: Real = 0     # mode 1's
    n0: Int = 0     # elements that entered mode 0's average
    n1: Int = 0


def left(acc: State, flip: Int, x: Real) -> State:
    assert 0 <= flip <= 1
    if flip == 1:
        return acc._replace(mode=1 - acc.mode)
    if acc.mode == 0:
        return acc._replace(a=0.5 * acc.a + x, n0=acc.n0 + 1)
    return acc._replace(b=0.8 * acc.b + x, n1=acc.n1 + 1)
