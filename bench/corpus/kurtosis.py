"""Fourth central moment in one pass (Pébay 2008): n, mean, M2, M3, M4."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0
    mean: Real = 0
    M2: Real = 0
    M3: Real = 0
    M4: Real = 0


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    delta = x - acc.mean
    dn = delta / n
    dn2 = dn * dn
    term1 = delta * dn * acc.n
    M4 = acc.M4 + term1 * dn2 * (n * n - 3 * n + 3) + 6 * dn2 * acc.M2 - 4 * dn * acc.M3
    M3 = acc.M3 + term1 * dn * (n - 2) - 3 * dn * acc.M2
    return State(n, acc.mean + dn, acc.M2 + term1, M3, M4)
