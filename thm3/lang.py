"""What a loop file imports: the type names and the functions it may call.

thm3 never imports a loop file; these definitions exist so that a loop file is also
plain Python, its own sequential reference, when a person imports it."""
from __future__ import annotations

import math

import numpy as np

inf = math.inf

Real = float
Int = int
Bool = bool
Index = int


class Vec(np.ndarray):
    """A vector of a length fixed at emit time (`--dim`); at Python level a NumPy array."""


def exp(x):
    return np.exp(x)


def exp2(x):
    return np.exp2(x)


def log(x):
    return np.log(x)


def log2(x):
    return np.log2(x)


def sqrt(x):
    return np.sqrt(x)


def where(c, a, b):
    return a if c else b


def dot(u, v):
    return float(np.dot(u, v))


__all__ = ["inf", "Real", "Int", "Bool", "Index", "Vec", "exp", "exp2", "log", "log2",
           "sqrt", "where", "dot"]
