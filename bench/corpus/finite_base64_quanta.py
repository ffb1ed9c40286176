"""Base64 statistics: the position in a quantum of four, whether padding was seen, the bytes decoded and the characters rejected.

Source: base64 decoders (RFC 4648) that validate as they count.  The element enters through
a character class of ten comparisons joined by `or`, besides '=' and a newline: read as
whole predicates they split the bytes into four cells, where their comparisons make
fourteen intervals.  The position and the padding flag are control (6 reachable states),
the two counts data with coefficient 1; the composition lift copies the control from the
other states and the counts from each."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    pos: Int = 0
    padded: Bool = False
    out: Int = 0
    rejected: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    alpha = (x >= 65 and x <= 90) or (x >= 97 and x <= 122) or (x >= 48 and x <= 57) or x == 43 or x == 47
    if x == 61:
        if acc.pos >= 2:
            return State((acc.pos + 1) % 4, True, acc.out, acc.rejected)
        return State(acc.pos, acc.padded, acc.out, acc.rejected + 1)
    if alpha:
        if acc.padded:
            return State(acc.pos, acc.padded, acc.out, acc.rejected + 1)
        return State((acc.pos + 1) % 4, False, acc.out + 1 if acc.pos >= 1 else acc.out, acc.rejected)
    if x == 10:
        return State(0, False, acc.out, acc.rejected)
    return State(acc.pos, acc.padded, acc.out, acc.rejected + 1)
