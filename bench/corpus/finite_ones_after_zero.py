"""Ones counted after the first zero.

Source: PLDI 2021 regular-pattern loops with a count (`1*0(0|1)*`, ones in the tail);
finite control with linear data, not a homomorphism without the count of all ones."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    seen: Bool = False      # a zero occurred so far
    c: Int = 0              # ones after the first zero


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    return State(acc.seen or x == 0, acc.c + 1 if acc.seen and x == 1 else acc.c)
