"""Count the matches (x == 7) until K of them are seen, then stop: a latched counter.

Source: "stop after K hits" loops (early-exit scans, top-K filters) written with a done
flag; for K <= 0 the first match latches it.  The flag is k >= K only where K >= 1:
the laws are proved by cases on K."""
from typing import NamedTuple
from thm3.lang import Bool, Int

K: Int          # the matches wanted


class State(NamedTuple):
    k: Int = 0            # matches so far
    done: Bool = False    # K matches reached


def left(acc: State, x: Int) -> State:
    if acc.done:
        return acc
    if x == 7:
        k = acc.k + 1
        return State(k, k >= K)
    return acc
