"""Not a homomorphism for every value of its parameter: a held value fed back with a gain k
that no `assert` makes nonnegative.

For k >= 0 the step is affine over (max, *) and the combine is max(k ** b.n * a.v, b.v);
for k = -1 the held value flips sign each step: [0] and [-1] both end at (0, 1), but after
[1] first they end at 0 and at -1.  The first witness search tries k = 2 and k = 0.5 only;
the second, after no combine was found, tries negative values too.  Source: a peak
tracker with a user-set feedback gain."""
from typing import NamedTuple
from thm3.lang import Int, Real


k: Real         # the feedback gain, any sign


class State(NamedTuple):
    v: Real = 0.0
    n: Int = 0


def left(acc: State, x: Real) -> State:
    return State(max(k * acc.v, x), acc.n + 1)
