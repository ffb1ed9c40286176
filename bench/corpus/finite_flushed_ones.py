"""Ones over bits buffered for four steps, then flushed into a total (gradient accumulation over masks).

Source: gradient accumulation / micro-batching: a phase counter mod 4 as control, a buffer
of the ones seen since the last flush and the flushed total as data. The buffer is
bounded (at most 3 ones), so it is finite control too; read that way the lift copies 9
states' worth of fields, read as data it copies the buffer and the total from the three
other phases and the slopes of both in the buffer from each phase (14 fields); 8, where
the total's copies, buf + total less the buffer's copy, are read so."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    phase: Int = 0
    buf: Int = 0
    total: Int = 0


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    phase = (acc.phase + 1) % 4
    buf = acc.buf + 1 if x == 1 else acc.buf
    if phase == 0:
        return State(phase, 0, acc.total + buf)
    return State(phase, buf, acc.total)
