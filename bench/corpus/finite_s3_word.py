"""The word problem of the symmetric group S3: which permutation a word of swaps (0) and rotations (1) composes to.

Source: the word problem for S3 (Barrington 1989; a non-commutative finite monoid, the
hard case of Mytkowicz, Musuvathi and Schulte, ASPLOS 2014); the state is the group
element, numbered 0..5, and each letter a selection among constants."""
from typing import NamedTuple
from thm3.lang import Int


class State(NamedTuple):
    m: Int = 0      # the permutation so far (0 is the identity)


def left(acc: State, x: Int) -> State:
    assert x == 0 or x == 1
    if x == 0:
        return State(2 if acc.m == 0 else (3 if acc.m == 1 else (0 if acc.m == 2 else (1 if acc.m == 3 else (5 if acc.m == 4 else 4)))))
    return State(3 if acc.m == 0 else (2 if acc.m == 1 else (5 if acc.m == 2 else (4 if acc.m == 3 else (0 if acc.m == 4 else 1)))))
