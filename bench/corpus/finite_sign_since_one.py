"""The sign of the distance since the last one: v = (-1) ** (elements since the last 1), 0 before any.

Source: alternating-sign detectors (a toggle reset by a marker); the lift needs the parity
of the length: a list without a one turns the start's sign by it."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    v: Int = 0      # 1 at a one, negated at each other element; 0 before the first one


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(1 if x == 1 else -acc.v)
