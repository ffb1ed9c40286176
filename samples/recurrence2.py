"""Second-order linear recurrence: y' = a * y + b * z + x with z the previous y."""
from typing import NamedTuple
from thm3.lang import Real

a: Real         # weight of the last value
b: Real         # weight of the value before it


class State(NamedTuple):
    y: Real = 0     # the value so far
    z: Real = 0     # the value one step before


def left(acc: State, x: Real) -> State:
    return State(a * acc.y + b * acc.z + x, acc.y)


def result(acc: State) -> Real:
    return acc.y
