"""A hash mod 1000003 that starts at 1, multiplies by 7 outside quotes and adds 2 x inside them.

Source: string hashing with a lexer state (quoted or not): two affine maps mod p chosen by
the control; from the initial hash 1 what a block adds is b.h less its slope, a
remainder that wraps, so the offset is fitted modulo p, not over the reals."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    quoted: Bool = False
    h: Int = 1


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if x == 34:
        return State(not acc.quoted, acc.h)
    if acc.quoted:
        return State(acc.quoted, (acc.h + 2 * x) % 1000003)
    return State(acc.quoted, (acc.h * 7 + x) % 1000003)
