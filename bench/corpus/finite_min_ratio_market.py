"""The cheapest quote after inflation: while the market is open every held price is scaled by the element's rate r, while it is closed prices hold; a toggle opens or closes it.

(min, *) on nonnegatives with a positive coefficient r (asserted: +inf, the zero, times 0
would be NaN) under a flag.  The lift adds the cheapest quote from each market state
started at +inf and the product of the rates from each (4 fields).  Source: cheapest
landed cost under a currency drift that applies only in trading hours."""
from typing import NamedTuple
from thm3.lang import Bool, Real


class State(NamedTuple):
    open_: Bool = True
    cost: Real = 1000.0


def left(acc: State, r: Real, x: Real, toggle: Bool) -> State:
    assert r > 0
    assert x >= 0
    o = acc.open_ != toggle
    return State(o, min(acc.cost * r, x) if o else min(acc.cost, x))
