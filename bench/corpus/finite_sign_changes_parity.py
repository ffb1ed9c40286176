"""Sign changes among the nonzero values, with the last nonzero sign (zeros skipped).

Source: sign-change counters (Parsynt's `alternating`, Farzan & Nicolet, PLDI 2017) with a
three-valued control sg in {-1, 0, 1}: the state holds the list's first sign only
through the parity of its count (the last sign turned `changes` times), so what b adds
from a's sign is b.changes, plus 1 where that first sign differs from a's: one form for
each residue of b.changes mod 2."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    sg: Int = 0          # the last nonzero sign, 0 before any
    changes: Int = 0


def left(acc: State, x: Real) -> State:
    if x == 0:
        return acc
    s = 1 if x > 0 else -1
    if acc.sg != 0 and s != acc.sg:
        return State(s, acc.changes + 1)
    return State(s, acc.changes)
