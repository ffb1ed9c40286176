"""Pretokenizer statistics: runs of one character class (letter, digit, space, other); count runs of two or more bytes, and the bytes in letter runs.

Source: byte-level pretokenizers that split text by character class. A homomorphism:
the first class, the leading run (capped at 2) and whether the list is one run, the last
class and the trailing run say how the blocks' runs join. The finite route first reads the
leading run as data to stay within 64 control states; what b adds to the count of long
runs then depends on it in no form fitted on samples, the forms are refuted on longer
lists, and read as control (73 states) the combine is a table, proved.
"""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    first: Int = 0
    lead: Int = 0
    whole: Bool = True
    last: Int = 0
    trail: Int = 0
    long_runs: Int = 0
    letters: Int = 0


def left(acc: State, x: Int) -> State:
    assert 0 <= x <= 255
    c = 1 if (65 <= x <= 90 or 97 <= x <= 122) else (2 if 48 <= x <= 57 else (3 if x == 32 else 4))
    same = c == acc.last
    trail = min(acc.trail + 1, 2) if same else 1
    first = c if acc.first == 0 else acc.first
    whole = acc.whole and (acc.first == 0 or same)
    lead = trail if whole else acc.lead
    done = 1 if (same and acc.trail == 1) else 0
    return State(first, lead, whole, c, trail, acc.long_runs + done, acc.letters + (1 if c == 1 else 0))
