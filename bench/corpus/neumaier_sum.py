"""Neumaier's compensated sum (the compensation is added at the end; 0 over the reals).

Source: Neumaier, "Rundungsfehleranalyse einiger Verfahren zur Summation endlicher
Summen", ZAMM 54, 1974."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # running sum
    c: Real = 0     # accumulated compensation


def left(acc: State, x: Real) -> State:
    t = acc.s + x
    if abs(acc.s) >= abs(x):
        return State(t, acc.c + ((acc.s - t) + x))
    else:
        return State(t, acc.c + ((x - t) + acc.s))


def result(acc: State) -> Real:
    return acc.s + acc.c
