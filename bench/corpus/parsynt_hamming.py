"""Hamming distance of two sequences given element by element.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), benchmark `hamming`."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    d: Int = 0      # positions where the two sequences differ


def left(acc: State, a: Int, b: Int) -> State:
    return State(acc.d + 1 if a != b else acc.d)
