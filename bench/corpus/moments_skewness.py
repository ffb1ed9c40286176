"""Mean with the second and third central moment sums (skewness), one element at a time.

Source: Pébay, "Formulas for robust, one-pass parallel computation of covariances and
arbitrary-order statistical moments", Sandia SAND2008-6212; Terriberry's update."""
from typing import NamedTuple
from thm3.lang import Int, Real


class State(NamedTuple):
    n: Int = 0          # count
    mean: Real = 0      # mean
    m2: Real = 0        # sum of (x - mean)**2
    m3: Real = 0        # sum of (x - mean)**3


def left(acc: State, x: Real) -> State:
    n = acc.n + 1
    delta = x - acc.mean
    dn = delta / n
    term = delta * dn * acc.n
    m3 = acc.m3 + term * dn * (n - 2) - 3 * dn * acc.m2
    return State(n, acc.mean + dn, acc.m2 + term, m3)
