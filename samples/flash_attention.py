"""FlashAttention: one query row of softmax(scale * q.K) V as a single pass over (k, v)."""
from typing import NamedTuple
from thm3.lang import Real, Vec, dot, exp, inf

q: Vec          # the query row
scale: Real     # softmax scale, usually 1 / sqrt(D)


class State(NamedTuple):
    m: Real = -inf  # largest score so far
    d: Real = 0     # sum of exp(score - m)
    o: Vec = 0      # sum of exp(score - m) * v (the zero vector at the start)


def left(acc: State, k: Vec, v: Vec) -> State:
    s = scale * dot(q, k)
    m = max(acc.m, s)
    c = exp(acc.m - m)      # rescales the old sums to the new max
    e = exp(s - m)
    return State(m, acc.d * c + e, acc.o * c + e * v)


def right(k: Vec, v: Vec, acc: State) -> State:
    s = scale * dot(q, k)
    m = max(s, acc.m)
    c = exp(acc.m - m)
    e = exp(s - m)
    return State(m, e + acc.d * c, e * v + acc.o * c)


def result(acc: State) -> Vec:
    # an empty (fully masked) row gives the zero vector, not NaN
    return acc.o / acc.d if acc.d > 0 else 0 * acc.o
