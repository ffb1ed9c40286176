"""A debounced level: it flips after five readings in a row that differ from it; the energy of the readings while it is high, and the flips counted.

Source: switch debouncing (firmware input filters): a level and a streak 0..4 as control
(10 reachable states), with a Real sum and an Int count as data, both added to with
coefficient 1.  Its lists have 80 transition functions: the composition lift copies the
level and the streak from the other states and the two sums from each (34 fields), and
that lifted loop has 81 reachable control states.  Its combine is given with the lift,
group by group (a's image of each state selects b's fields from there), where a table of
a's lifted states against b's has 6,561 rows."""
from typing import NamedTuple
from thm3.lang import Bool, Int, Real


class State(NamedTuple):
    level: Bool = False
    streak: Int = 0
    energy: Real = 0
    flips: Int = 0


def left(acc: State, x: Real) -> State:
    high = x > 0
    if high != acc.level:
        if acc.streak == 4:
            return State(high, 0, acc.energy + x if high else acc.energy, acc.flips + 1)
        return State(acc.level, acc.streak + 1, acc.energy + x if acc.level else acc.energy, acc.flips)
    return State(acc.level, 0, acc.energy + x if acc.level else acc.energy, acc.flips)
