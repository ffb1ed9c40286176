"""A hash mod 65521 of the code bytes of a source file: a line comment runs from 35 ('#') to 10 (newline), a string from 34 (a quote) to the next unescaped quote, 92 (a backslash) escapes the next byte in a string.

Source: rolling hashes of source text for caching and deduplication (a build tool's hash
of the code without its comments and string contents).  Four modes as control, the hash
as data with coefficient 7 in code and 1 elsewhere.  The composition lift copies the mode
from the three other modes, the hash from each, and the slope 7 ** k from each (10
fields); its lifted loop has 88 reachable control states.  Its step law is proved field
by field (`thm3.prove.fieldwise`): split over all 88 states, each case stepped all four
copies of b at once (about 300 paths a case)."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    mode: Int = 0       # 0 code, 1 line comment, 2 string, 3 escape in a string
    h: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if acc.mode == 0:
        if x == 35:
            return State(1, acc.h)
        if x == 34:
            return State(2, acc.h)
        return State(0, (acc.h * 7 + x) % 65521)
    if acc.mode == 1:
        if x == 10:
            return State(0, acc.h)
        return acc
    if acc.mode == 3:
        return State(2, acc.h)
    if x == 92:
        return State(3, acc.h)
    if x == 34:
        return State(0, acc.h)
    return acc
