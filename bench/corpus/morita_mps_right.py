"""Maximum prefix sum with the right fold Morita et al. start from.

Source: Morita et al., PLDI 2007, sec. 2 (mps with both folds; weak right inverse [m, s - m])."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    m: Real = 0     # best prefix sum
    s: Real = 0     # total


def left(acc: State, x: Real) -> State:
    return State(max(acc.m, acc.s + x), acc.s + x)


def right(x: Real, acc: State) -> State:
    return State(max(0, x + acc.m), x + acc.s)
