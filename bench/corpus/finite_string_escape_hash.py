"""A hash mod 1000003 of the characters inside string literals, with backslash escapes.

Source: a three-mode lexer (outside, inside quotes, after a backslash) with a rolling
hash that runs in two of the modes: finite control with data affine mod p.  Its
composition lift copies the mode and the hash from the two other modes and the hash's
slope 31 ** k from each (17 reachable control states of the lifted loop, 289 paths in
associativity over three states)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    mode: Int = 0      # 0 outside, 1 inside quotes, 2 after a backslash inside quotes
    h: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if acc.mode == 0:
        if x == 34:
            return State(1, acc.h)
        return acc
    if acc.mode == 2:
        return State(1, (acc.h * 31 + x) % 1000003)
    if x == 92:
        return State(2, acc.h)
    if x == 34:
        return State(0, acc.h)
    return State(1, (acc.h * 31 + x) % 1000003)
