"""String to integer: the value of a list of decimal digits, most significant first."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    v: Int = 0      # value of the digits so far


def left(acc: State, x: Int) -> State:
    assert 0 <= x <= 9
    return State(10 * acc.v + x)


def result(acc: State) -> Int:
    return acc.v
