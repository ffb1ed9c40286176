"""The best compounded gain of a run that ends here, counted from the first start signal: before it nothing is tracked.

(max, *) on nonnegatives with the element's gain g as the coefficient, under a sticky gate:
best' = max(best * g, g) once open.  From "closed" the product of the gains starts at b's
first start signal, from "open" at b's first element: the lift adds the best from "open"
and the product from each start (3 fields).  Source: the maximum-product subarray (Kadane
over (max, *)) behind a warm-up gate; best compounded return since a strategy went live."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    gate: Bool = False
    best: Real = 0.0


def left(acc: State, g: Real, start: Bool) -> State:
    assert g >= 0
    gate = acc.gate or start
    return State(gate, max(acc.best * g, g) if gate else acc.best)
