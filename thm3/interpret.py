"""The reference interpreter: one `evaluate` over the IR, and the NumPy table that gives
it the loop's meaning on numbers (IEEE semantics, NaN propagating through max/min).

Other tables (SymPy, Z3, the prover's extended reals, the CUDA printer) live with the
stage that uses them; `tests/test_tables.py` checks that each covers every `Op`."""
from __future__ import annotations

import numpy as np

from thm3.ir import Expr, Fn, Op, Type, walk


def evaluate(exprs, env: dict, table: dict) -> list:
    """Values of `exprs` with VAR leaves looked up in `env`; shared subterms once."""
    memo: dict[int, object] = {}
    for e in walk(exprs):
        match e.op:
            case Op.CONST:
                v = table[Op.CONST](e.arg, e.type)
            case Op.VAR:
                v = env[e.arg]
            case Op.POW:
                v = table[Op.POW](memo[id(e.src[0])], e.arg)
            case _:
                v = table[e.op](*(memo[id(s)] for s in e.src))
        memo[id(e)] = v
    return [memo[id(e)] for e in exprs]


def call(fn: Fn, *args, table: dict | None = None):
    """Apply `fn` to positional values for its inputs."""
    env = {name: a for (name, _), a in zip(fn.inputs, args, strict=True)}
    return evaluate(fn.outputs, env, table or NUMPY)


def _np_const(value, type_):
    match type_:
        case Type.BOOL:
            return np.bool_(value)
        case Type.INT:
            return np.int64(value)
        case _:
            return np.float64(value)


def _max(a, b):
    # NaN propagates from either side, as IEEE maximum does; ties give b.
    return np.where((a > b) | (a != a), a, b)


def _min(a, b):
    return np.where((a < b) | (a != a), a, b)


def _div(a, b):
    return np.true_divide(a, b)


def _pow(a, n):
    return np.power(np.asarray(a, dtype=np.float64), n) if n < 0 else a ** n


def _dot(u, v):
    # Vectors carry their lanes on the last axis; batched scalars are kept as shape
    # (..., 1) so that scalar-vector arithmetic broadcasts.
    return np.sum(u * v, axis=-1, keepdims=np.ndim(u) > 1 or np.ndim(v) > 1)


NUMPY: dict = {
    Op.CONST: _np_const,
    Op.NEG: np.negative,
    Op.NOT: np.logical_not,
    Op.ABS: np.abs,
    Op.EXP: np.exp,
    Op.EXP2: np.exp2,
    Op.LOG: np.log,
    Op.LOG2: np.log2,
    Op.SQRT: np.sqrt,
    Op.ADD: np.add,
    Op.SUB: np.subtract,
    Op.MUL: np.multiply,
    Op.DIV: _div,
    Op.POW: _pow,
    Op.MAX: _max,
    Op.MIN: _min,
    Op.LT: np.less,
    Op.LE: np.less_equal,
    Op.GT: np.greater,
    Op.GE: np.greater_equal,
    Op.EQ: np.equal,
    Op.NE: np.not_equal,
    Op.AND: np.logical_and,
    Op.OR: np.logical_or,
    Op.WHERE: np.where,
    Op.DOT: _dot,
}


def quiet():
    """NumPy error state for evaluating loops: inf/NaN are values, not warnings."""
    return np.errstate(all="ignore")
