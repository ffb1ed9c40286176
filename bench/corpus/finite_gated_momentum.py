"""A position moved by a momentum with decay beta, only once two non-negative elements came in a row.

Source: gated heavy-ball updates (momentum SGD skipped on a warm-up counter): a capped
run counter as control, two coupled data fields (v, and the position that adds v)
with a parameter weight; the lift copies the counter and both fields from the run of one,
and the slopes of v and the position in v from each run state."""
from typing import NamedTuple
from thm3.lang import Int, Real

beta: Real


class State(NamedTuple):
    run: Int = 0
    v: Real = 0
    pos: Real = 0


def left(acc: State, x: Real) -> State:
    run = min(acc.run + 1, 2) if x >= 0 else 0
    if run == 2:
        v = beta * acc.v + x
        return State(run, v, acc.pos + v)
    return State(run, acc.v, acc.pos)
