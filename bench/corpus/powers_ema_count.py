"""Exponential moving average with its sample count: s' = (1 - alpha) s + alpha x, n' = n + 1.
The combine needs the decay over b's list, (1 - alpha) ** b.n, a power of a parameter's
coefficient that b's count gives: no decay field has to be added.

Source: the EMA of samples/ema.py as a metrics logger keeps it, with the number of
samples seen (PyTorch Lightning's running metrics, a training dashboard's smoothed loss)."""
from typing import NamedTuple
from thm3.lang import Int, Real

alpha: Real     # smoothing factor


class State(NamedTuple):
    n: Int = 0      # samples so far
    s: Real = 0     # the average


def left(acc: State, x: Real) -> State:
    assert 0 < alpha < 1
    return State(acc.n + 1, (1 - alpha) * acc.s + alpha * x)
