"""Mean with the second, third and fourth central moment sums (kurtosis).

Source: Pébay, SAND2008-6212, the one-pass update of M2, M3, M4."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0          # count
    mean: Real = 0      # mean
    m2: Real = 0        # sum of (x - mean)**2
    m3: Real = 0        # sum of (x - mean)**3
    m4: Real = 0        # sum of (x - mean)**4


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    delta = x - acc.mean
    dn = delta / n
    dn2 = dn * dn
    term = delta * dn * acc.n
    m4 = acc.m4 + term * dn2 * (n * n - 3 * n + 3) + 6 * dn2 * acc.m2 - 4 * dn * acc.m3
    m3 = acc.m3 + term * dn * (n - 2) - 3 * dn * acc.m2
    return State(n, acc.mean + dn, acc.m2 + term, m3, m4)
