"""The numerators of a continued fraction's convergents, mod 101: p' = x p + q, q' = p.

Source: continuants (Euler's recurrence for convergents; also the Euclidean algorithm run
backwards): a 2x2 step matrix [[x, 1], [1, 0]] that depends on the element, over (+, *)
mod 101.  The state is the first column of the product of the step matrices; the lift adds
the second.  q's update is p's value, no remainder written, but a remainder all the same:
it is read as reduced."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    p: Int = 1
    q: Int = 0


def left(acc: State, x: Int) -> State:
    assert x >= 0
    return State((x * acc.p + acc.q) % 101, acc.p)
