"""Frames counted, payload bytes counted and their checksum mod 251, over a byte stream with framing.

Source: HDLC-style framing (a start and an end flag 126, an escape byte 125 that passes
the next byte through): a five-mode scanner (idle, after the start flag, in the payload,
after an escape, after the end flag) as control, with two counts and a sum mod 251 that
the start flag resets.  Its composition lift copies the mode from the four other modes,
the three data fields from two of them, and the checksum's slope (0 once a start flag
reset it, else 1) from three: 13 fields, 64 reachable control states of the lifted loop."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    mode: Int = 0       # 0 idle, 1 after the start flag, 2 in the payload, 3 after an escape, 4 after the end flag
    frames: Int = 0
    nbytes: Int = 0
    ck: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    if acc.mode == 0 or acc.mode == 4:
        if x == 126:
            return State(1, acc.frames, acc.nbytes, 0)
        return State(0, acc.frames, acc.nbytes, acc.ck)
    if acc.mode == 3:
        return State(2, acc.frames, acc.nbytes + 1, (acc.ck + x) % 251)
    if x == 126:
        return State(4, acc.frames + 1, acc.nbytes, acc.ck)
    if x == 125:
        return State(3, acc.frames, acc.nbytes, acc.ck)
    return State(2, acc.frames, acc.nbytes + 1, (acc.ck + x) % 251)
