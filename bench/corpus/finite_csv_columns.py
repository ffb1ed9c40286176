"""CSV bytes: count fields and lines, sum the bytes of the third column, count quoted bytes and stray quotes.

Source: CSV scanners split across blocks of a file. Control: inside quotes, and the
column capped at 3, 6 reachable states and 196 transition functions; data: five counts
and sums. Not a homomorphism: [] and [0] end alike, but after an opening quote the 0 is a
quoted byte. The copies lift (35 fields) is found and proved by composition.
"""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    quoted: Bool = False
    col: Int = 0
    fields: Int = 0
    lines: Int = 0
    third: Int = 0
    inq: Int = 0
    stray: Int = 0


def left(acc: State, x: Int) -> State:
    assert 0 <= x <= 255
    if acc.quoted:
        if x == 34:
            return State(False, acc.col, acc.fields, acc.lines, acc.third, acc.inq, acc.stray)
        return State(True, acc.col, acc.fields, acc.lines, acc.third, acc.inq + 1, acc.stray)
    if x == 34:
        if acc.col == 2 or acc.col == 0:
            return State(True, acc.col, acc.fields, acc.lines, acc.third, acc.inq, acc.stray)
        return State(False, acc.col, acc.fields, acc.lines, acc.third, acc.inq, acc.stray + 1)
    if x == 44:
        return State(False, min(acc.col + 1, 3), acc.fields + 1, acc.lines, acc.third, acc.inq, acc.stray)
    if x == 10:
        return State(False, 0, acc.fields + 1, acc.lines + 1, acc.third, acc.inq, acc.stray)
    if acc.col == 2:
        return State(False, acc.col, acc.fields, acc.lines, acc.third + x, acc.inq, acc.stray)
    return State(False, acc.col, acc.fields, acc.lines, acc.third, acc.inq, acc.stray)
