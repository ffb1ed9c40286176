"""Whether the last element is positive, with a nonempty flag that the combine needs.

Source: PLDI 2021 regular-pattern loops ("ends with" a letter of a class)."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    has: Bool = False       # the list is not empty
    pos: Bool = False       # the last element is positive


def left(acc: State, x: Real) -> State:
    return State(True, x > 0)
