"""A sum of the positive parts saturating at a cap of either sign: s = min(s + max(x, 0), cap).

Source: saturating accumulators (Morita et al., PLDI 2007, the clipped-sum family), with
no assumption on the cap: where cap >= 0, 0 <= s <= cap and the join is min(s1 + s2, cap);
where cap < 0 the first element sets s to cap for good.  No one range holds on both
sides: the laws are proved by cases on the cap's sign."""
from typing import NamedTuple
from thm3.lang import Real

cap: Real       # the saturation level


class State(NamedTuple):
    s: Real = 0.0     # min(sum of the positive parts, cap), once an element came


def left(acc: State, x: Real) -> State:
    return State(min(acc.s + max(x, 0.0), cap))
