"""Third-order IIR filter (an all-pole filter with three taps): y' = a1 y + a2 y1 + a3 y2 + x.

Source: direct-form IIR filters (Oppenheim & Schafer, "Discrete-Time Signal Processing",
ch. 6) and the linear recurrences of Blelloch 1990: the parallel scan composes the affine
maps s -> A s + (x, 0, 0) with A the constant companion matrix of the taps, whose power
A**n Cayley-Hamilton writes as ch0 I + ch1 A + ch2 A**2 (three fields, not nine)."""
from typing import NamedTuple
from thm3.lang import Real

a1: Real        # tap on the last output
a2: Real        # tap on the one before
a3: Real        # tap on the one before that


class State(NamedTuple):
    y: Real = 0     # the output so far
    y1: Real = 0    # one step before
    y2: Real = 0    # two steps before


def left(acc: State, x: Real) -> State:
    return State(a1 * acc.y + a2 * acc.y1 + a3 * acc.y2 + x, acc.y, acc.y1)
