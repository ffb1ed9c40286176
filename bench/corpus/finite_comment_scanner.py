"""Bytes of code and bytes inside /* */ comments, counted by a four-mode scanner.

Source: a C-like lexer (code, '/' seen, inside a comment, '*' seen inside): finite control
with two counts. Its copies lift has 57 reachable control states (the 4 modes from each
start), which the laws are proved on with the invariant that the control is one of them."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    mode: Int = 0       # 0 code, 1 after '/', 2 inside a comment, 3 after '*' inside
    code: Int = 0
    comment: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if acc.mode == 0:
        if x == 47:
            return State(1, acc.code, acc.comment)
        return State(0, acc.code + 1, acc.comment)
    if acc.mode == 1:
        if x == 42:
            return State(2, acc.code, acc.comment)
        return State(0, acc.code + 2, acc.comment)
    if acc.mode == 2:
        if x == 42:
            return State(3, acc.code, acc.comment)
        return State(2, acc.code, acc.comment + 1)
    if x == 47:
        return State(0, acc.code, acc.comment)
    return State(2, acc.code, acc.comment + 2)
