"""Exact sampled states for the linear-algebra routes (interpolation, transport): lists of
small integers folded with `left` over Python `Fraction`s, so that h(xs), h(ys) and
h(xs + ys) are exact rationals and a fitted coefficient can be checked exactly.

A loop whose `left` leaves the rationals (exp, log, sqrt, an infinite default, a Vec)
has no exact samples; `exact_rows` says why."""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from thm3.ir import Loop, Op, Type, initial_state, walk
from thm3.ir.cache import Bounded
from thm3.semantics.evaluate import COMPARE, Compiled
from thm3.errors import NotRational  # noqa: F401  (raised here; the routes import it from here)

# Enough distinct values that no polynomial of degree <= 5 in a max (|x| <= 9) fits
# by accident; halves only for Real elements.
INT_VALUES = (0, 1, -1, 2, -2, 3, -3, 4, -5, 6, 7, -8, 9)
REAL_VALUES = INT_VALUES + (Fraction(1, 2), Fraction(-3, 2), Fraction(5, 2))
PARAM_VALUES = ((2, 3, -1, 5), (2, 3, -1, 5, Fraction(1, 2)))


# A division by 0 gives NaN (a float): both sides of a select are evaluated, and the
# side not taken may divide by 0.  A NaN that reaches a state ends the sample.
def _div(a, b):
    if isinstance(a, float) or isinstance(b, float) or b == 0:
        return float("nan")
    return Fraction(a) / Fraction(b)


def _pow(a, n):
    if isinstance(a, float) or (n < 0 and a == 0):
        return float("nan")
    return Fraction(a) ** n


def _pown(a, n):
    # `c ** n` for an Int n; an exponent past a few thousand (an Int field that grows
    # fast) would make numbers of millions of digits: the rows leave exact reach
    if isinstance(n, float):
        return float("nan")
    if abs(n) > 4096:
        raise NotRational(f"a power with exponent {n} is too large to keep exact")
    return _pow(a, int(n))


def _const(value, type_):
    match type_:
        case Type.BOOL:
            return bool(value)
        case _ if value in (float("inf"), float("-inf")) or value != value:
            raise NotRational(f"the constant {value} is not rational")
        case _:
            return Fraction(value)


def _not_rational(name):
    def f(*_):
        raise NotRational(f"{name} leaves the rationals")
    return f


EXACT: dict = {
    Op.CONST: _const,
    Op.NEG: operator.neg,
    Op.NOT: operator.not_,
    Op.ABS: abs,
    Op.EXP: _not_rational("exp"),
    Op.EXP2: _not_rational("exp2"),
    Op.LOG: _not_rational("log"),
    Op.LOG2: _not_rational("log2"),
    Op.SQRT: _not_rational("sqrt"),
    Op.ADD: operator.add,
    Op.SUB: operator.sub,
    Op.MUL: operator.mul,
    Op.DIV: _div,
    Op.POW: _pow,
    Op.POWN: _pown,
    Op.MOD: lambda a, m: a % m,
    Op.MAX: lambda a, b: a if a > b else b,
    Op.MIN: lambda a, b: a if a < b else b,
    **COMPARE,
    Op.AND: lambda a, b: a and b,
    Op.OR: lambda a, b: a or b,
    Op.WHERE: lambda c, a, b: a if c else b,
    Op.DOT: _not_rational("dot"),
}


def as_float(x) -> float:
    """An exact value as a float, +-inf where it is beyond float64 (float() of a Fraction
    whose quotient overflows raises instead): the float fits drop such rows, the exact
    checks still read them."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


@dataclass(frozen=True)
class Row:
    """One sampled pair of lists: the loop parameters, h(xs), h(ys), h(xs + ys)."""
    params: dict
    a: tuple
    b: tuple
    c: tuple


_SENTINEL_TABLES: dict = {}


def with_sentinel(big: Fraction) -> dict:
    """The EXACT table with +-inf read as +-big: a stand-in for the interpolation route on
    loops whose empty state holds an infinity (a last element -inf while empty).  The
    fits it gives are candidates only: they are checked in floating point and proved.
    One table per `big` (so that `exact_rows` finds its rows again)."""
    got = _SENTINEL_TABLES.get(big)
    if got is None:
        got = _SENTINEL_TABLES[big] = _sentinel_table(big)
    return got


def _sentinel_table(big: Fraction) -> dict:
    def const(value, type_):
        if type_ is not Type.BOOL and not isinstance(value, bool) and value in (float("inf"), float("-inf")):
            return big if value > 0 else -big
        return _const(value, type_)
    return EXACT | {Op.CONST: const}


# The last few loops' row streams (the invariant stage and the interpolation and
# transport routes of one analysis ask for the same rows, 200 or 400 of them):
# (loop, max_len, seed) -> the `_Stream`s of the tables asked for (a table is a dict, not
# hashable).  A fresh run for any count draws the same sequence, so each count's rows are
# read off the one stream.
_STREAMS = Bounded(8)


def exact_rows(loop: Loop, count: int = 400, max_len: int = 5, seed: int = 0,
               table: dict | None = None) -> list[Row]:
    """`count` exact rows over lists of length 0..max_len; raises NotRational.
    The rows of the last few loops are remembered, and a request for more rows goes on
    from where the last one stopped: the answer is the one a fresh run gives."""
    table = EXACT if table is None else table
    try:
        key = (loop, max_len, seed)
        streams = _STREAMS.get(key)
    except TypeError:                   # an unhashable loop: a stream of its own
        return _Stream(loop, max_len, seed, table).take(count)
    if streams is None:
        streams = _STREAMS.put(key, [])
    stream = next((s for s in streams if s.table is table), None)
    if stream is None:
        stream = _Stream(loop, max_len, seed, table)
        streams.append(stream)
    try:
        return stream.take(count)
    except NotRational:
        raise
    except BaseException:
        # left half-drawn (an error, or the deadline's alarm, `PastDeadline`, a
        # BaseException, between a draw and its row): not reused
        if stream in streams:
            streams.remove(stream)
        raise


class _Stream:
    """The draws of `exact_rows` for one loop, made as far as asked and kept: draw r
    (r = 0, 1, ...) gives a row or none (no list met the preconditions), or raises
    NotRational; a run for `count` makes draw r while it has fewer than `count` rows and
    r <= 20 * count."""

    def __init__(self, loop: Loop, max_len: int, seed: int, table: dict):
        self.table = table
        self.rows: list[tuple[int, Row]] = []      # (draw, row), in draw order
        self.next = 0
        self.error: tuple[int, NotRational] | None = None
        self.settings: list = []
        try:
            if any(f.type is Type.VEC for f in loop.fields) or \
                    any(d.type is Type.VEC for d in loop.elements + loop.params):
                raise NotRational("a Vec is not a rational number")
            self.loop = loop
            self.step = Compiled(loop.left.outputs, table)
            self.names = [n for n, _ in loop.left.inputs]
            self.k = len(loop.fields)
            self.init = tuple(table[Op.CONST](e.arg, e.type) for e in initial_state(loop))
            self.pre = Compiled(loop.preconditions, EXACT) if loop.preconditions else None
            self.rng = np.random.default_rng(seed)
            self.lengths = [(la, lb) for la in range(max_len + 1) for lb in range(max_len + 1)]
            # parameter settings under which some element satisfies the preconditions (a
            # weight 0 < alpha < 1 leaves few of the pool): drawn once, so no row is spent
            # on the others
            rng = self.rng
            settings = [{d.name: _draw(d.type, rng, PARAM_VALUES) for d in loop.params}
                        for _ in range(40 if loop.params else 1)]
            self.settings = [p for p in settings if _elements(loop, rng, p, 1, self.pre) is not None]
        except NotRational as e:
            self.error = (-1, e)

    def take(self, count: int) -> list[Row]:
        if self.error is not None and self.error[0] < 0:
            raise NotRational(*self.error[1].args)
        if not self.settings:
            return []
        while self.error is None and len(self.rows) < count and self.next <= 20 * count:
            self._draw_one()
        out = []
        for r, row in self.rows:
            if len(out) >= count or r > 20 * count:
                break
            out.append(row)
        if self.error is not None:
            r_err, e = self.error
            if r_err <= 20 * count and sum(1 for r, _ in self.rows if r < r_err) < count:
                raise NotRational(*e.args)
        return out

    def _draw_one(self) -> None:
        r = self.next
        rng, loop = self.rng, self.loop
        params = self.settings[int(rng.integers(0, len(self.settings)))]
        la, lb = self.lengths[r % len(self.lengths)]
        try:
            xs = _elements(loop, rng, params, la + lb, self.pre)
            if xs is not None:
                fold = lambda s, items: _fold(self.step, self.names, self.k, s, items, params)  # noqa: E731
                a = fold(self.init, xs[:la])
                self.rows.append((r, Row(params, a, fold(self.init, xs[la:]), fold(a, xs[la:]))))
        except NotRational as e:
            self.error = (r, e)
        self.next = r + 1


def _draw(type_: Type, rng, pool):
    match type_:
        case Type.BOOL:
            return bool(rng.integers(0, 2))
        case Type.INT:
            return Fraction(int(pool[0][rng.integers(0, len(pool[0]))]))
        case _:
            return Fraction(pool[1][rng.integers(0, len(pool[1]))])


def _elements(loop: Loop, rng, params: dict, n: int, pre) -> list | None:
    out = []
    for pos in range(n):
        for _ in range(50):
            e = tuple(Fraction(pos) if d.index else _draw(d.type, rng, (INT_VALUES, REAL_VALUES)) for d in loop.elements)
            env = dict(params) | {d.name: v for d, v in zip(loop.elements, e)}
            if pre is None or all(pre(env)):
                out.append(e)
                break
        else:
            return None
    return out


def _fold(step: Compiled, names, k: int, s: tuple, items, params) -> tuple:
    for e in items:
        env = dict(zip(names[:k], s)) | dict(zip(names[k:], e)) | params
        s = tuple(step(env))
        if any(isinstance(v, float) for v in s):
            raise NotRational("a division by 0 on a sampled list")
    return s


def rational_loop_reason(loop: Loop, infinities: bool = False) -> str:
    """Why `left` has no exact samples, or '' (`infinities`: an infinite default is fine,
    read through `with_sentinel`)."""
    bad = sorted({e.op.name.lower() for e in walk(loop.left.outputs)
                  if e.op in (Op.EXP, Op.EXP2, Op.LOG, Op.LOG2, Op.SQRT, Op.DOT)})
    if bad:
        return f"left uses {', '.join(bad)}, which leave the rationals"
    if infinities:
        return ""
    inf = [f.name for f in loop.fields if f.type is not Type.BOOL and f.default in (float("inf"), float("-inf"))]
    if inf:
        return f"field {inf[0]} starts at an infinity"
    return ""


__all__ = ["EXACT", "NotRational", "Row", "exact_rows", "rational_loop_reason", "with_sentinel"]
