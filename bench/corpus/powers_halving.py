"""A sum halved at every positive element: not a homomorphism without 2**-k, k the positives so far.

Source: the `2^-k` lifts of issue 21 (the weight of a block is 2 to minus the count of
positives after it); Parsynt-style (Farzan & Nicolet, PLDI 2017) conditional scaling."""
from typing import NamedTuple
from thm3.lang import Real


class State(NamedTuple):
    s: Real = 0     # the halved sum


def left(acc: State, x: Real) -> State:
    if x > 0:
        return State((acc.s + x) / 2)
    return State(acc.s + x)
