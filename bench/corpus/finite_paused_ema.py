"""An exponential moving average that a zero pauses and the next zero resumes: finite control, a parameter decay.

Source: weighted automata (Schützenberger 1961) with a symbolic weight: the control
(paused or running) chooses the affine map ema -> ema (paused) or lam ema + x (running), so
a block's map from each control state scales by lam to the number of running steps, which
neither the flag nor the average gives.  The lift adds the average from the paused state
and the slope (a power of lam) from each state."""
from typing import NamedTuple
from thm3.lang import Bool, Real

lam: Real           # the decay per running step


class State(NamedTuple):
    paused: Bool = False
    ema: Real = 0


def left(acc: State, x: Real) -> State:
    if x == 0:
        return State(not acc.paused, acc.ema)
    if acc.paused:
        return acc
    return State(acc.paused, lam * acc.ema + x)
