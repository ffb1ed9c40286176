"""A three-state mode machine: a 1 moves to the next mode, a 0 keeps it.

Source: mode machines of embedded controllers (a cyclic automaton written as a
selection among constants, without `%`); Mytkowicz et al., ASPLOS 2014."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    m: Int = 0      # the mode: 0, 1 or 2


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if x == 1:
        if acc.m == 0:
            return State(1)
        elif acc.m == 1:
            return State(2)
        return State(0)
    return State(acc.m)
