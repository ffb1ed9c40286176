"""Fletcher's two sums mod 251, taken only between toggle markers (255).

Source: checksums under finite control (framed Fletcher sums): while the gate is on, s1 adds
the byte and s2 adds s1, both mod 251; the block's map of (s1, s2) from each gate state is
unipotent, s2 gaining s1 once per byte taken, a count the state does not hold.  The lift
adds both sums from the other gate state and that count from each state (the constant
slopes, 1 on the diagonal and 0 above it, are read as constants)."""
from typing import NamedTuple
from thm3.lang import Bool, Int


class State(NamedTuple):
    on: Bool = False
    s1: Int = 0
    s2: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0 and x <= 255
    if x == 255:
        return State(not acc.on, acc.s1, acc.s2)
    if acc.on:
        s1 = (acc.s1 + x) % 251
        return State(acc.on, s1, (acc.s2 + s1) % 251)
    return acc
