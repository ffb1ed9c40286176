"""A peak meter whose decay depends on the previous sample: after a quiet sample (below 0.1) the held peak halves, after a loud one it keeps 0.9 of itself.

(max, *) on nonnegatives under one control bit (quiet, read off the element).  A list's map
of the peak from each control state is max(P_q * peak, V): the offset V does not depend on
the start, the product P_q of the decays does, by its first factor only.  The copies lift
adds the product from each start and the control from "quiet" (3 fields; 2 would do: the
product after the first step and whether the list is empty).  Source: audio
peak-programme meters with program-dependent release; GPU utilisation peak-hold."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    quiet: Bool = False
    peak: Real = 0.0


def left(acc: State, x: Real) -> State:
    assert x >= 0
    return State(x < 0.1, max(acc.peak * (0.5 if acc.quiet else 0.9), x))
