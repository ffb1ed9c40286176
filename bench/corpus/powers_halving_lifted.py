"""A sum halved at every positive element, with the weight 2**-k kept (k the positives so far).

Source: the lift of powers_halving.py (issue 21's `2^-k` class): the composed map
s -> 2**-k s + s2, so s = s1 w2 + s2 and w = w1 w2."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # the halved sum
    w: Real = 1     # 2 ** -(number of positive elements so far)


def left(acc: State, x: Real) -> State:
    if x > 0:
        return State((acc.s + x) / 2, acc.w / 2)
    return State(acc.s + x, acc.w)
