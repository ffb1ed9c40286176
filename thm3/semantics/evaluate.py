"""The one evaluator over the IR, and the tables that give it meanings: NUMPY (IEEE
semantics, NaN propagating through max/min) and PYTHON (the same on plain floats).

The evaluator is one rule (a node's value is its table entry applied to its children's
values) with two drivers: `Compiled`, a schedule of one DAG for many environments (folds,
backends), and `Memo`, which keeps every node's value under one environment across terms
(the synthesis checks, the critical values).  `evaluate` is a fresh `Memo`; `rows` lifts
a table to batches of rows.  Every evaluation in thm3 goes through them.

Other tables live with the stage that uses them: SymPy (`sympy_table`), the prover's
extended reals (`symbolic`), exact rationals (`thm3.synth.exact`), the CUDA printer;
`tests/test_tables.py` checks that each covers every `Op`."""
from __future__ import annotations

import math
import operator
from fractions import Fraction

import numpy as np

from thm3.ir import WITH_ARG, Expr, Fn, Op, Type, walk
from thm3.ir.cache import Bounded
from thm3.ir.program import lower


def evaluate(exprs, env: dict, table: dict) -> list:
    """Values of `exprs` with VAR leaves looked up in `env`; shared subterms once."""
    return Memo(env, table).values(exprs)


def call(fn: Fn, *args, table: dict | None = None):
    """Apply `fn` to positional values for its inputs."""
    env = {name: a for (name, _), a in zip(fn.inputs, args, strict=True)}
    return evaluate(fn.outputs, env, table or NUMPY)


# The NumPy type of each IR type (a Vec holds float64 lanes): the one typing table of
# the NumPy side.
DTYPES = {Type.REAL: np.float64, Type.INT: np.int64, Type.BOOL: np.bool_, Type.VEC: np.float64}


def numpy_value(value, type_: Type):
    """A value (Python or NumPy; a Vec as a list or array) as the NumPy value the
    interpreter uses for `type_`."""
    return np.asarray(value, dtype=np.float64) if type_ is Type.VEC else DTYPES[type_](value)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _np_const(value, type_):
    if type_ is Type.INT and isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        # an Int literal beyond int64: a Python int in an object array, so that the
        # values computed from it are exact (Python ints) rather than an OverflowError
        return np.asarray(value, dtype=object)
    return DTYPES[type_](value)


def _max(a, b):
    # NaN propagates from either side, as IEEE maximum does; ties give b.
    return np.where((a > b) | (a != a), a, b)


def _min(a, b):
    return np.where((a < b) | (a != a), a, b)


def _div(a, b):
    return np.true_divide(a, b)


def _pow(a, n):
    return np.power(np.asarray(a, dtype=np.float64), n) if n < 0 else a ** n


def _pown(a, n):
    # a Real to an Int power (`c ** n`): IEEE pow, so 0 ** -k is inf and a huge power
    # overflows to inf or underflows to 0, as the sequential loop's float arithmetic does
    with quiet():
        return np.power(np.asarray(a, dtype=np.float64), np.asarray(n, dtype=np.float64))


def _mod(a, m):
    # floored, as Python's %: the value lies in [0, m) for every integer a
    return np.mod(a, m)


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
    Op.POWN: _pown,
    Op.MOD: _mod,
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


def _real_div(a, b):
    # In the reals of the proofs x / 0 has no value (`thm3.semantics.symbolic` makes it
    # NaN, as inf - inf): a list whose fold divides by zero has no state.
    with quiet():
        return np.where(np.asarray(b) == 0, np.nan, np.true_divide(a, b))


def _real_pow(a, n):
    # a ** -k is 1 / a ** k: no value at a == 0, as in the proofs
    if n >= 0:
        return _pow(a, n)
    with quiet():
        return np.where(np.asarray(a) == 0, np.nan, _pow(a, n))


def _real_pown(a, n):
    # as POW: 0 ** -k has no value
    with quiet():
        return np.where((np.asarray(a) == 0) & (np.asarray(n) < 0), np.nan, _pown(a, n))


# NUMPY with the proofs' division: x / 0 (and 0 ** -k) is NaN, not ±inf.  The folds that
# stand for the proofs' semantics use it: the witness search, the synthesis samples and
# the lists that refute an unproved law, so that a combine correct in the reals is not
# rejected because IEEE's 1 / 0 = inf collides with an infinite default.
NUMPY_REALS: dict = NUMPY | {Op.DIV: _real_div, Op.POW: _real_pow, Op.POWN: _real_pown}


# Comparisons mean the same on every kind of value that has them (Python and NumPy
# numbers, Z3 terms); the tables share this one.
COMPARE = {
    Op.LT: operator.lt,
    Op.LE: operator.le,
    Op.GT: operator.gt,
    Op.GE: operator.ge,
    Op.EQ: operator.eq,
    Op.NE: operator.ne,
}


def quiet():
    """NumPy error state for evaluating loops: inf/NaN are values, not warnings."""
    return np.errstate(all="ignore")


# -- Python floats: the same meaning as NUMPY, for element-by-element folds ---------
# NumPy scalars cost about a microsecond an operation; a sequential fold over 10**6
# elements is the reference the parallel forms are tested against, so it runs on
# plain floats (NumPy arrays only for Vec values) with IEEE results where Python
# would raise.


def _py_div(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        with quiet():
            return np.true_divide(a, b)
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _py_unary(f, fallback):
    def g(a):
        if isinstance(a, np.ndarray):
            with quiet():
                return fallback(a)
        try:
            return f(a)
        except (OverflowError, ValueError):
            with quiet():
                return float(fallback(np.float64(a)))
    return g


def _py_pow(a, n):
    if isinstance(a, np.ndarray):
        return _pow(a, n)
    try:
        return float(a) ** n if n < 0 or isinstance(a, float) else a ** n
    except (OverflowError, ZeroDivisionError):
        with quiet():
            return float(_pow(np.float64(a), n))


def _py_pown(a, n):
    # NumPy's power, not Python's float ** int: the two differ in the last bit on some
    # arguments (700.0 ** -3), and the reference must mean what the NumPy table means;
    # an exact base (a Fraction, in the tests' exact folds) stays exact
    if isinstance(a, np.ndarray) or isinstance(n, np.ndarray):
        return _pown(a, n)
    if isinstance(a, Fraction) and abs(n) <= 4096:
        return a ** int(n) if a != 0 or n >= 0 else math.inf
    return float(_pown(np.float64(a), n))


def _py_max(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _max(a, b)
    return a if (a > b or a != a) else b


def _py_min(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _min(a, b)
    return a if (a < b or a != a) else b


def _py_const(value, type_):
    match type_:
        case Type.BOOL:
            return bool(value)
        case Type.INT:
            return int(value)
        case _:
            return float(value)


def _py_dot(u, v):
    return float(np.dot(u, v))


PYTHON: dict = {
    Op.CONST: _py_const,
    Op.NEG: operator.neg,
    Op.NOT: operator.not_,
    Op.ABS: abs,
    Op.EXP: _py_unary(math.exp, np.exp),
    Op.EXP2: _py_unary(lambda x: 2.0 ** x, np.exp2),
    Op.LOG: _py_unary(math.log, np.log),
    Op.LOG2: _py_unary(math.log2, np.log2),
    Op.SQRT: _py_unary(math.sqrt, np.sqrt),
    Op.ADD: operator.add,
    Op.SUB: operator.sub,
    Op.MUL: operator.mul,
    Op.DIV: _py_div,
    Op.POW: _py_pow,
    Op.POWN: _py_pown,
    Op.MOD: lambda a, m: _mod(a, m) if isinstance(a, np.ndarray) else a % m,
    Op.MAX: _py_max,
    Op.MIN: _py_min,
    **COMPARE,
    Op.AND: lambda a, b: a and b,
    Op.OR: lambda a, b: a or b,
    Op.WHERE: lambda c, a, b: a if c else b,
    Op.DOT: _py_dot,
}


# -- the evaluator ------------------------------------------------------------------
# One rule gives a node its value from its children's values and the table: a constant
# through table[CONST], a variable from the environment, POW and MOD with their constant integer,
# every other op as table[op] of its operands.  Two drivers apply it: `Compiled` fixes
# the schedule of one DAG for many environments (a fold calls it once per element);
# `Memo` keeps every node's value under one environment across calls (candidate terms
# that share subterms cost only their new nodes).  `evaluate` is a fresh `Memo`.


class Compiled:
    """`outputs` as a fixed schedule over a table: the DAG is walked once, so a call
    costs only the table's functions, once per node."""

    __slots__ = ("_steps", "_outputs")

    def __init__(self, outputs, table: dict, plain=frozenset(), plain_table: dict | None = None):
        """`plain`: the nodes computed with `plain_table` instead (an Int operation proved
        in range, without the checked table's test).  The schedule is the IR's one lowering
        (`thm3.ir.program`)."""
        program = lower(outputs)
        steps = []
        for step in program.steps:
            e, op = step.node, step.node.op
            if e in plain:
                steps.append((plain_table[op], e.arg if op in WITH_ARG else _NO_ARG, step.args))
                continue
            if op is Op.CONST:
                steps.append((_CONST, table[Op.CONST](e.arg, e.type), ()))
            elif op is Op.VAR:
                steps.append((_VAR, e.arg, ()))
            elif op in WITH_ARG:
                steps.append((table[op], e.arg, step.args[:1]))
            else:
                steps.append((table[op], _NO_ARG, step.args))
        self._steps = steps
        self._outputs = list(program.outputs)

    def __call__(self, env: dict) -> list:
        vals: list = []
        push = vals.append
        for f, arg, srcs in self._steps:
            if f is _VAR:
                push(env[arg])
            elif f is _CONST:
                push(arg)
            elif arg is _NO_ARG:
                push(f(*[vals[i] for i in srcs]))
            else:                               # POW or MOD and its constant
                push(f(vals[srcs[0]], arg))
        return [vals[i] for i in self._outputs]


# outputs (a tuple of interned nodes) -> [(table, its Compiled schedule)]: a table is a
# dict, not hashable, and few tables serve one step
_SCHEDULES = Bounded(256)


def compiled(outputs: tuple, table: dict) -> Compiled:
    """The `Compiled` schedule of `outputs` (a tuple, such as an `Fn`'s) over `table`,
    remembered: a step applied many times (a batched fold) is scheduled once."""
    outputs = tuple(outputs)
    runs = _SCHEDULES.get(outputs)
    if runs is None:
        runs = _SCHEDULES.put(outputs, [])
    for t, run in runs:
        if t is table:
            return run
    run = Compiled(outputs, table)
    runs.append((table, run))
    return run


class Memo:
    """Values under one environment, each node computed once for the life of the
    memo.  The memo holds the nodes it has seen, so their ids stay theirs."""

    __slots__ = ("env", "table", "_memo")

    def __init__(self, env: dict, table: dict):
        self.env, self.table = env, table
        self._memo: dict[int, tuple] = {}

    def values(self, exprs) -> list:
        if getattr(self.table, "short_circuit", False):
            return self._on_demand(exprs)
        memo, table, env = self._memo, self.table, self.env
        for e in walk(exprs, self._known if memo else None):
            op = e.op
            if op is Op.CONST:
                v = table[Op.CONST](e.arg, e.type)
            elif op is Op.VAR:
                v = env[e.arg]
            elif op in WITH_ARG:
                v = table[op](memo[id(e.src[0])][1], e.arg)
            else:
                v = table[op](*[memo[id(s)][1] for s in e.src])
            memo[id(e)] = (e, v)
        return [memo[id(e)][1] for e in exprs]

    def _on_demand(self, exprs) -> list:
        """`values`, where a selection whose condition is a Python bool (a comparison of
        constants: the control fields of a law split on the reachable control) takes only
        its branch: the other is never evaluated, nor split on by a symbolic table."""
        memo, table, env, known = self._memo, self.table, self.env, self._known
        stack = list(reversed(exprs))
        while stack:
            e = stack.pop()
            if known(e):
                continue
            op = e.op
            if op is Op.CONST:
                memo[id(e)] = (e, table[Op.CONST](e.arg, e.type))
                continue
            if op is Op.VAR:
                memo[id(e)] = (e, env[e.arg])
                continue
            if op is Op.WHERE:
                c = e.src[0]
                if not known(c):
                    stack += [e, c]
                    continue
                cv = memo[id(c)][1]
                if cv is True or cv is False:
                    branch = e.src[1] if cv else e.src[2]
                    if not known(branch):
                        stack += [e, branch]
                    else:
                        memo[id(e)] = (e, memo[id(branch)][1])
                    continue
            missing = [s for s in e.src if not known(s)]
            if missing:
                stack.append(e)
                stack += reversed(missing)
                continue
            if op in WITH_ARG:
                v = table[op](memo[id(e.src[0])][1], e.arg)
            else:
                v = table[op](*[memo[id(s)][1] for s in e.src])
            memo[id(e)] = (e, v)
        return [memo[id(e)][1] for e in exprs]

    def _known(self, e: Expr) -> bool:
        got = self._memo.get(id(e))
        return got is not None and got[0] is e

    def value(self, e: Expr):
        """The value of one node (computed now if it was not)."""
        got = self._memo.get(id(e))
        if got is not None and got[0] is e:
            return got[1]
        return self.values([e])[0]

    def get(self, e: Expr, default=None):
        """The value of `e` if it was computed, else `default`."""
        got = self._memo.get(id(e))
        return got[1] if got is not None and got[0] is e else default


def rows(table: dict, count: int) -> dict:
    """`table` lifted to lists of `count` values (one a row of environments): each op
    applied row by row.  With a `Memo` over an environment of such lists, a term's
    values on every row are computed together, each shared node once."""
    out = {op: (lambda *args, _f=f: [_f(*a) for a in zip(*args)]) for op, f in table.items()}
    out[Op.CONST] = lambda value, type_, _c=table[Op.CONST]: [_c(value, type_)] * count
    for op in WITH_ARG:
        out[op] = lambda a, n, _p=table[op]: [_p(x, n) for x in a]
    return out


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_VAR, _CONST, _NO_ARG = (_Marker(n) for n in ("VAR", "CONST", "NO_ARG"))
