"""Runs of positive and of negative elements, ten fields: for each sign the longest,
leading and trailing run, the number of blocks of positives, the length, the sum and the
largest element.

Source: Parsynt (Farzan & Nicolet, PLDI 2017), `count blocks` and `max block ones`, with
AutoLifter's lead/trail lifting, taken to both signs in one state."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    bp: Int = 0         # longest run of positives
    lp: Int = 0         # run of positives at the start
    tp: Int = 0         # run of positives at the end
    kp: Int = 0         # number of blocks of positives
    bn: Int = 0         # longest run of negatives
    ln: Int = 0         # run of negatives at the start
    tn: Int = 0         # run of negatives at the end
    n: Int = 0          # length
    s: Real = 0         # sum
    hi: Real = -inf     # largest element


def left(acc: State, x: Real) -> State:
    p = x > 0
    q = x < 0
    tp = acc.tp + 1 if p else 0
    tn = acc.tn + 1 if q else 0
    lp = acc.lp + 1 if p and acc.lp == acc.n else acc.lp
    ln = acc.ln + 1 if q and acc.ln == acc.n else acc.ln
    kp = acc.kp + 1 if p and acc.tp == 0 else acc.kp
    return State(max(acc.bp, tp), lp, tp, kp, max(acc.bn, tn), ln, tn, acc.n + 1, acc.s + x, max(acc.hi, x))
