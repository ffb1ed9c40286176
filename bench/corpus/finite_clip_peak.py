"""A peak meter that decays slowly (0.95 a sample) until the first clip (a sample above 1), and fast (0.5) from then on.

(max, *) on nonnegatives under a sticky flag.  From "clipped" every step halves the peak,
from "clean" the decays switch at b's first clip: the lift adds the peak from "clipped" and
the product of the decays from each start (3 fields).  Source: limiter gain-reduction
meters; a loss-spike monitor that tightens after the first divergence."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    clipped: Bool = False
    peak: Real = 0.0


def left(acc: State, x: Real) -> State:
    assert x >= 0
    c = acc.clipped or x > 1.0
    return State(c, max(acc.peak * (0.5 if c else 0.95), x))
