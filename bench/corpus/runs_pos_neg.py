"""The longest run of positive values and the longest run of negative values, side by side.

Source: streak statistics over a signed series (winning and losing streaks of returns;
Parsynt, PLDI 2017, blocks and runs): two independent groups of fields, each no
homomorphism on its own.  Each group lifts on its own by the flag "every element so far
has the sign" and the leading run, and the two lifts add up: four fields, past what one
search over the whole state takes at once."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    cur_pos: Int = 0    # the current run of positive values
    best_pos: Int = 0   # the longest one
    cur_neg: Int = 0    # the current run of negative values
    best_neg: Int = 0   # the longest one


def left(acc: State, x: Real) -> State:
    cp = acc.cur_pos + 1 if x > 0 else 0
    cn = acc.cur_neg + 1 if x < 0 else 0
    return State(cp, max(acc.best_pos, cp), cn, max(acc.best_neg, cn))
