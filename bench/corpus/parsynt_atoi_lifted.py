"""String to integer, lifted with 10**len.

Source: Farzan & Nicolet, PLDI 2017 (Parsynt), `atoi` after lifting."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    v: Int = 0      # the number read so far
    pw: Int = 1     # 10 ** (digits read)


def left(acc: State, d: Int) -> State:
    assert d >= 0 and d <= 9
    return State(acc.v * 10 + d, acc.pw * 10)
