"""Exact sampled states for the linear-algebra routes (interpolation, transport): lists of
small integers folded with `left` over Python `Fraction`s, so that h(xs), h(ys) and
h(xs + ys) are exact rationals and a fitted coefficient can be checked exactly.

A loop whose `left` leaves the rationals (exp, log, sqrt, an infinite default, a Vec)
has no exact samples; `exact_rows` says why."""
from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from thm3.ir import Loop, Op, Type, walk
from thm3.semantics.evaluate import COMPARE, Compiled

# Enough distinct values that no polynomial of degree <= 5 in a max (|x| <= 9) fits
# by accident; halves only for Real elements.
INT_VALUES = (0, 1, -1, 2, -2, 3, -3, 4, -5, 6, 7, -8, 9)
REAL_VALUES = INT_VALUES + (Fraction(1, 2), Fraction(-3, 2), Fraction(5, 2))
PARAM_VALUES = ((2, 3, -1, 5), (2, 3, -1, 5, Fraction(1, 2)))


class NotRational(Exception):
    """The loop's values leave the rationals (the message says where)."""


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
    Op.MAX: lambda a, b: a if a > b else b,
    Op.MIN: lambda a, b: a if a < b else b,
    **COMPARE,
    Op.AND: lambda a, b: a and b,
    Op.OR: lambda a, b: a or b,
    Op.WHERE: lambda c, a, b: a if c else b,
    Op.DOT: _not_rational("dot"),
}


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


# The last few loops' rows (the interpolation, transport and invariant stages of one
# analysis ask for the same ones): (loop, count, max_len, seed, id(table)) -> (table, rows
# or the NotRational raised).  The rows are a pure function of the key.
_ROWS: dict = {}
_ROWS_KEPT = 8


def exact_rows(loop: Loop, count: int = 400, max_len: int = 5, seed: int = 0,
               table: dict | None = None) -> list[Row]:
    """`count` exact rows over lists of length 0..max_len; raises NotRational.
    Computed once per loop and arguments (the last few are remembered)."""
    table = EXACT if table is None else table
    try:
        key = (loop, count, max_len, seed, id(table))
        got = _ROWS.get(key)
    except TypeError:                   # an unhashable loop: computed each time
        return _exact_rows(loop, count, max_len, seed, table)
    if got is None or got[0] is not table:
        try:
            got = (table, _exact_rows(loop, count, max_len, seed, table))
        except NotRational as e:
            got = (table, e)
        _ROWS[key] = got
        while len(_ROWS) > _ROWS_KEPT:
            del _ROWS[next(iter(_ROWS))]
    if isinstance(got[1], NotRational):
        raise NotRational(*got[1].args)
    return list(got[1])


def _exact_rows(loop: Loop, count: int, max_len: int, seed: int, table: dict) -> list[Row]:
    if any(f.type is Type.VEC for f in loop.fields) or any(d.type is Type.VEC for d in loop.elements + loop.params):
        raise NotRational("a Vec is not a rational number")
    step = Compiled(loop.left.outputs, table)
    names = [n for n, _ in loop.left.inputs]
    k = len(loop.fields)
    init = tuple(table[Op.CONST](f.default, f.type) for f in loop.fields)
    pre = Compiled(loop.preconditions, EXACT) if loop.preconditions else None
    rng = np.random.default_rng(seed)
    lengths = [(la, lb) for la in range(max_len + 1) for lb in range(max_len + 1)]
    rows: list[Row] = []
    # parameter settings under which some element satisfies the preconditions (a weight
    # 0 < alpha < 1 leaves few of the pool): drawn once, so no row is spent on the others
    settings = [{d.name: _draw(d.type, rng, PARAM_VALUES) for d in loop.params} for _ in range(40 if loop.params else 1)]
    settings = [p for p in settings if _elements(loop, rng, p, 1, pre) is not None]
    if not settings:
        return rows
    for r in itertools.count():
        if len(rows) >= count or r > 20 * count:
            break
        params = settings[int(rng.integers(0, len(settings)))]
        la, lb = lengths[r % len(lengths)]
        xs = _elements(loop, rng, params, la + lb, pre)
        if xs is None:
            continue
        fold = lambda s, items: _fold(step, names, k, s, items, params)  # noqa: E731
        a = fold(init, xs[:la])
        rows.append(Row(params, a, fold(init, xs[la:]), fold(a, xs[la:])))
    return rows


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
