"""Number of elements equal to the key (Int elements).

Source: PLDI 2021 regular-pattern loops (counting a letter)."""
from typing import NamedTuple
from thm3.lang import Int

key: Int        # the letter counted


class State(NamedTuple):
    c: Int = 0      # matches so far


def left(acc: State, x: Int) -> State:
    return State(acc.c + 1 if x == key else acc.c)
