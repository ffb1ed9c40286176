"""The two largest distinct values, each with how often it came.

Source: top-k with multiplicities (a leaderboard's two best scores and their ties; Parsynt,
PLDI 2017, `second max` taken to counts): the state is its own list with multiplicities,
so the combine folds b's values into a, each as often as b counted it (once with `left`,
then the count of its slot raised by the rest), and nothing for an empty slot."""
from typing import NamedTuple
from thm3.lang import Int, Real, inf


class State(NamedTuple):
    m1: Real = -inf     # the largest value
    c1: Int = 0         # how often it came
    m2: Real = -inf     # the second largest distinct value
    c2: Int = 0         # how often it came


def left(acc: State, x: Real) -> State:
    if x > acc.m1:
        return State(x, 1, acc.m1, acc.c1)
    elif x == acc.m1:
        return State(acc.m1, acc.c1 + 1, acc.m2, acc.c2)
    elif x > acc.m2:
        return State(acc.m1, acc.c1, x, 1)
    elif x == acc.m2:
        return State(acc.m1, acc.c1, acc.m2, acc.c2 + 1)
    else:
        return acc
