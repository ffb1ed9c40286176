"""Contains the factor 101: a four-state automaton kept as an Int: not a homomorphism.

Source: PLDI 2021 regular-pattern loops (`.*101.*`); Mytkowicz, Musuvathi and Schulte,
ASPLOS 2014 (data-parallel finite-state machines)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    st: Int = 0     # 0: no progress, 1: seen "1", 2: seen "10", 3: found 101


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if acc.st == 3:
        return State(3)
    if x == 1:
        return State(3 if acc.st == 2 else 1)
    return State(2 if acc.st == 1 else 0)
