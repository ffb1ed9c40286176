"""The parallel form of a loop on the CPU: blocked `left` folds, then a tree of `combine`s
in list order, vectorised with NumPy.  `run_sequential` is the plain fold, the reference
that every backend (this one, the CUDA kernels in `gpu/`) is tested against.

The parallel form, as defined here:

1. cut the n elements into R = ceil(n / L) runs of L consecutive elements (L = `block`);
   the last run is padded, and a padding lane keeps its state (a masked step);
2. fold every run with `left` from the identity, all R runs side by side: step j applies
   `left` to element j of every run at once, reading one row of the transposed runs;
3. combine neighbouring run states level by level, (s0, s1), (s2, s3), ..., the earlier
   run always the left operand, padding a level of odd length with the identity at its
   end, until one state remains.  n = 0 gives the identity.

Steps 2 and 3 run over `width` runs at a time (a power of two, so that a chunk of runs is
a whole subtree of step 3: chunking changes no combine), so that what a step reads stays
in the cache; the Python overhead is per step and per tree level, never per element.  The
steps read each run's element j through a strided view rather than a transposed copy:
NumPy's transposing copy costs more than the strided reads it would save.

The CUDA kernel (`gpu/render/cuda.py`, `gpu/render/templates/reduce.cu`) uses the same two ingredients in the same order, with
other run lengths and tree shapes: each thread folds ITEMS consecutive elements with
`left`; a warp combines its 32 runs with shuffles at offsets 1, 2, 4, 8, 16 (the lower
lane is the left operand: the same neighbour-pair tree as step 3); each warp carries a
running state over a contiguous range of warp tiles; the warps of a block and then the
blocks (one partial state each, combined by a second launch) are combined in order.
So both compute h(xs) in list order; for an exact combine (max, integer sums, argmax)
they agree bit for bit, otherwise up to rounding from the different tree shapes.
"""
from __future__ import annotations

import numpy as np

from thm3.analysis.int_bounds import check_length, unchecked
from thm3.backends.guard import SLOW_RUNS, Span, any_uncovered, carry, specials
from thm3.errors import Thm3Error, UsageError
from thm3.semantics.evaluate import NUMPY, PYTHON, Compiled, evaluate, quiet
from thm3.semantics.fold import Fold
from thm3.ir import Fn, Loop, Op, Type, initial_state

# Measured on NumPy 2 (bench/numpy_backend.py): longer runs make the strided reads of
# step 2 cost more than the combines they save; wider chunks leave the cache.
DEFAULT_BLOCK = 4           # run length L
DEFAULT_WIDTH = 1 << 16     # runs folded side by side per chunk
CHUNK_LEVELS = 6            # tree levels done per chunk, while it is in the cache


# --- the reference ------------------------------------------------------------------

def run_sequential(loop: Loop, arrays, params: dict, *, n: int | None = None,
                   dim: int | None = None) -> tuple:
    """The plain left fold, element by element, in float64 (Ints as Python ints, exact):
    the meaning of the loop.
    It runs on Python floats through the PYTHON table (the NUMPY table's semantics,
    checked op by op in tests/test_tables.py), as one generated function
    (`semantics.fold.Fold`).  `arrays` holds one array per element parameter that is
    not an `Index` (shape (n,), or (n, D) for a Vec); returns the final state."""
    data, state = fold_sequential(loop, arrays, params, n=n, dim=dim)
    # an Int field is the Python int the fold computed: exact, also beyond int64
    return tuple(v if f.type is Type.INT and isinstance(v, int) else _scalar_value(v, f.type, np.float64, data.dim)
                 for v, f in zip(state, loop.fields))


def fold_sequential(loop: Loop, arrays, params: dict, *, n: int | None = None, dim: int | None = None,
                    every: list | None = None):
    """The inputs read as `run_sequential` reads them, and the final state of the fold
    over Python values; with a list `every`, the state after each element is appended
    to it (a scan's prefixes)."""
    data = Inputs(loop, arrays, params, np.float64, n, dim)
    state = [py_value(v, f.type) for v, f in zip(identity(loop, dim=data.dim), loop.fields)]
    env = {k: py_value(v, None) for k, v in data.params.items()}
    columns = [None if p.index else (a if a.ndim > 1 else a.tolist())
               for p, a in zip(loop.elements, data.element_arrays)]
    with quiet():
        return data, Fold(loop, PYTHON, every=every is not None)(state, columns, 0, data.n, env, every)


def py_value(v, type_):
    """A Python scalar (float, int, bool) for a NumPy scalar; arrays stay arrays."""
    arr = np.asarray(v)
    if arr.ndim:
        return arr
    return arr.item()


def identity(loop: Loop, *, dim: int | None = None, dtype=np.float64) -> tuple:
    """The identity of the combine: the fields' defaults (a Vec default is that constant
    in every lane)."""
    return tuple(_scalar_value(e.arg, f.type, dtype, dim) for f, e in zip(loop.fields, initial_state(loop)))


def result_class(name: str, names: tuple[str, ...]):
    """The NamedTuple class of a loop's named results (one class per name and fields, so
    that answers compare and `isinstance` holds across calls); its values pickle (Dask
    workers send them) by name and fields, not by a module attribute."""
    key = (name, tuple(names))
    cls = _RESULT_CLASSES.get(key)
    if cls is None:
        from collections import namedtuple
        base = namedtuple(name, names)
        cls = _RESULT_CLASSES[key] = type(name, (base,), {
            "__slots__": (), "__module__": __name__,
            "__reduce__": lambda self: (_result_value, (key[0], key[1], tuple(self)))})
    return cls


_RESULT_CLASSES: dict = {}


def _result_value(name, names, values):
    return result_class(name, names)(*values)


def shaped_result(loop: Loop, values):
    """`result`'s values in the shape it returns them: the value itself, a tuple, or the
    file's NamedTuple of named results."""
    match loop.result_kind:
        case "value":
            return values[0]
        case "tuple":
            return tuple(values)
        case "namedtuple":
            return result_class(loop.result_class, loop.result_names)(*values)
        case kind:
            raise ValueError(f"no result kind {kind!r}")


def apply_result(loop: Loop, state, params: dict):
    """The loop's answer for a final state: `result` applied (in the shape it returns),
    or the state itself."""
    if loop.result is None:
        return tuple(state)
    env = {f"acc.{f.name}": v for f, v in zip(loop.fields, state)}
    env.update(param_values(loop, params, np.float64))
    with quiet():
        out = evaluate(loop.result.outputs, env, NUMPY)
    dim = next((np.size(v) for v in env.values() if np.ndim(v) == 1), None)   # a Vec's length
    values = [_scalar_value(v, t, np.float64, dim) for v, t in zip(out, loop.result_types)]
    return shaped_result(loop, values)


# --- the parallel form --------------------------------------------------------------

def run_parallel(loop: Loop, combine: Fn, arrays, params: dict, *,
                 block: int = DEFAULT_BLOCK, dtype=np.float64, width: int = DEFAULT_WIDTH,
                 n: int | None = None, dim: int | None = None, offset: int = 0) -> tuple:
    """The final state computed in the parallel form described in the module docstring:
    runs of `block` elements folded with `left` side by side, then a tree of `combine`s
    in list order.  Real values are computed in `dtype`.  `offset` is the position of
    the arrays' first element in the whole list (what an `Index` element reads), for a
    part of a longer list such as a Dask chunk."""
    if block < 1 or width < 1 or width & (width - 1):
        raise UsageError("block must be >= 1 and width a power of two")
    dtype = np.dtype(dtype).type
    data = Inputs(loop, arrays, params, dtype, n, dim, offset)
    table = value_table(dtype)
    plan = Plan(loop, data, block, table, combine)
    merge = Tree(loop, combine, data, table)
    chunk = block * width
    with quiet():
        if data.n <= chunk:
            totals = plan.fold_runs(0, data.n)
            state, poisoned = merge.reduce(totals), any_uncovered(loop, totals)
        else:
            # A full chunk's runs are a whole subtree of step 3, so its first levels run
            # while the chunk is in the cache; the last chunk is padded on odd levels
            # exactly as the whole tree pads its end.
            levels = min(CHUNK_LEVELS, width.bit_length() - 1)
            parts, poisoned = [], False
            for c0 in range(0, data.n, chunk):
                totals = plan.fold_runs(c0, min(data.n, c0 + chunk))
                poisoned = poisoned or any_uncovered(loop, totals)
                parts.append(merge.levels(totals, levels))
            state = merge.reduce(tuple(np.concatenate(fields) for fields in zip(*parts)))
        special = specials(loop, data)
        if poisoned or merge.uncovered or special is not None:      # the proof's limits: see `guard`
            state = reduce_carried(loop, combine, data, table, special=special)
        return _unbatch(loop, state)


def reduce_carried(loop: Loop, combine: Fn, data: "Inputs", table: dict, start: tuple | None = None,
                   special=False) -> tuple:
    """The final state (one lane) computed as `guard.carry` does, over `guard.SLOW_RUNS`
    runs: the combine where the states are covered, the loop's own fold where not;
    from `start` (one lane; the identity by default).  `special`: the elements' flags
    (`guard.specials`), worked out here unless given."""
    real = table[Op.CONST](0.0, Type.REAL).dtype.type
    if data.n == 0:
        return batched_identity(loop, 1, data.dim, real) if start is None else start
    length = -(-data.n // min(SLOW_RUNS, data.n))
    runs = -(-data.n // length)
    totals = Plan(loop, data, length, table, combine).fold_runs(0, data.n)
    bounds = [min(data.n, r * length) for r in range(runs + 1)]
    return carry(loop, Tree(loop, combine, data, table), totals, bounds,
                 Span(loop, data, real, table, combine), keep=False, start=start,
                 special=specials(loop, data) if special is False else special)[1]


class Inputs:
    """The element arrays and loop parameters, checked and converted to `dtype`."""

    def __init__(self, loop: Loop, arrays, params: dict, dtype, n, dim, offset: int = 0):
        self.offset = int(offset)                   # the first element's Index
        data_params = [p for p in loop.elements if not p.index]
        arrays = list(arrays)
        if len(arrays) != len(data_params):
            names = ", ".join(p.name for p in data_params)
            raise UsageError(f"{loop.name}: expected {len(data_params)} arrays ({names}), "
                             f"got {len(arrays)}")
        converted = iter([np.asarray(a, dtype=field_dtype(p.type, dtype))
                          for a, p in zip(arrays, data_params)])
        self.element_arrays = [None if p.index else next(converted) for p in loop.elements]
        lengths = {len(a) for a in self.element_arrays if a is not None}
        if n is None and not lengths:
            raise UsageError(f"{loop.name}: only Index elements; pass n")
        if len(lengths) > 1 or (n is not None and lengths and lengths != {n}):
            raise UsageError(f"{loop.name}: element arrays of different lengths {sorted(lengths)}")
        self.n = n if n is not None else lengths.pop()
        check_length(loop.name, self.offset + self.n)
        self.params = param_values(loop, params, dtype)
        dims = {a.shape[1] for a, p in zip(self.element_arrays, loop.elements)
                if p.type is Type.VEC and a is not None and a.ndim == 2}
        dims |= {len(self.params[p.name]) for p in loop.params if p.type is Type.VEC}
        if dim is not None:
            dims.add(dim)
        if len(dims) > 1:
            raise UsageError(f"{loop.name}: Vec values of different lengths {sorted(dims)}")
        self.dim = dims.pop() if dims else None
        needs_dim = any(t is Type.VEC for t in
                        [f.type for f in loop.fields] + [p.type for p in loop.elements])
        if needs_dim and self.dim is None:
            raise UsageError(f"{loop.name}: the length of Vec values is unknown; pass dim")
        for a, p in zip(self.element_arrays, loop.elements):
            want = 2 if p.type is Type.VEC else 1
            if a is not None and a.ndim != want:
                raise UsageError(f"{loop.name}: element {p.name} must be {want}-D, got shape {a.shape}")


class Plan:
    """Step 2: fold runs of L elements with `left`, all runs of a chunk side by side."""

    def __init__(self, loop: Loop, data: Inputs, block: int, table: dict, combine: Fn | None = None):
        self.loop, self.data, self.L = loop, data, block
        # with the combine, the Int operations its bounds prove in range go unchecked
        plain = unchecked(loop, combine, loop.left.outputs, "left") if combine is not None else set()
        self.left = Compiled(loop.left.outputs, table, plain, NUMPY)
        self.table = table
        self.names = [f"acc.{f.name}" for f in loop.fields]
        self.real = table[Op.CONST](0.0, Type.REAL).dtype.type

    def fold_runs(self, begin: int, end: int, start: tuple | None = None,
                  record: list | None = None) -> tuple:
        """The states of the runs that cover elements [begin, end), one lane per run.
        Each run is folded from `start` (one state a lane; the identity by default); with
        `record` (one array a field, shaped (runs, L) or (runs, L, D)) the state after
        every step is written into it: the runs' inclusive prefixes, for the scan."""
        L, loop = self.L, self.loop
        count = end - begin
        runs = -(-count // L)
        if runs == 0:
            return batched_identity(loop, 0, self.data.dim, self.real)
        rows = []                                   # per element: (runs, L, 1 or D) views
        for p, a in zip(loop.elements, self.data.element_arrays):
            if p.index:
                rows.append(None)
                continue
            part = a[begin:end]
            if runs * L != count:                   # pad the last run; masked below
                part = np.concatenate([part, np.zeros((runs * L - count,) + part.shape[1:], part.dtype)])
            rows.append(part.reshape((runs, L) + part.shape[1:] if part.ndim == 2 else (runs, L, 1)))
        has_index = any(p.index for p in loop.elements)
        starts = self.data.offset + begin + L * np.arange(runs, dtype=np.int64)[:, None] if has_index else None
        last_len = count - (runs - 1) * L           # elements in the last run
        if last_len < L:
            padding = np.zeros((runs, 1), dtype=bool)
            padding[-1] = True
        state = batched_identity(loop, runs, self.data.dim, self.real) if start is None else start
        env = dict(self.data.params)
        for j in range(L):
            env.update(zip(self.names, state))
            for p, r in zip(loop.elements, rows):
                env[p.name] = starts + j if p.index else r[:, j]
            try:
                new = self.left(env)
                if j >= last_len:                       # lane runs-1 is past the end: keep it
                    new = [np.where(padding, old, v) for old, v in zip(state, new)]
                state = _conform(new, state)
            except OverflowError:
                raise _overflow(loop, loop.left, env, self.table, "left") from None
            if record is not None:
                for out, v in zip(record, state):
                    out[:, j] = v if out.ndim == 3 else v[:, 0]
        return state


class Tree:
    """Step 3: combine neighbouring states level by level, earlier state on the left."""

    def __init__(self, loop: Loop, combine: Fn, data: Inputs, table: dict):
        self.loop, self.data = loop, data
        self.combine = Compiled(combine.outputs, table, unchecked(loop, combine, combine.outputs, "combine"), NUMPY)
        self.fn, self.table = combine, table
        self.a = [f"a.{f.name}" for f in loop.fields]
        self.b = [f"b.{f.name}" for f in loop.fields]
        self.real = table[Op.CONST](0.0, Type.REAL).dtype.type
        self.uncovered = False      # whether a combine left the proof's cover (see `guard`)

    def reduce(self, states: tuple) -> tuple:
        """One state (the identity for none)."""
        if len(states[0]) == 0:
            return batched_identity(self.loop, 1, self.data.dim, self.real)
        while len(states[0]) > 1:
            states = self._level(states)
        return states

    def levels(self, states: tuple, count: int) -> tuple:
        """`count` levels, also on a single state (which is then combined with the identity,
        as the whole tree does with its last state on a level of odd length)."""
        for _ in range(count):
            states = self._level(states)
        return states

    def _level(self, states: tuple) -> tuple:
        if len(states[0]) % 2:
            pad = batched_identity(self.loop, 1, self.data.dim, self.real)
            states = tuple(np.concatenate([s, p]) for s, p in zip(states, pad))
        return self.pair(tuple(s[0::2] for s in states), tuple(s[1::2] for s in states))

    def pair(self, left: tuple, right: tuple) -> tuple:
        """combine(left[i], right[i]) in every lane."""
        env = dict(self.data.params)
        env.update(zip(self.a, left))
        env.update(zip(self.b, right))
        try:
            out = _conform(self.combine(env), left)
        except OverflowError:
            raise _overflow(self.loop, self.fn, env, self.table, "the combine") from None
        self.uncovered = self.uncovered or any_uncovered(self.loop, out)
        return out


# --- values ---------------------------------------------------------------------------

def value_table(dtype) -> dict:
    """CHECKED with Real constants in `dtype`, so that a float32 run stays in float32."""
    if dtype is np.float64:
        return CHECKED
    base = CHECKED[Op.CONST]
    table = dict(CHECKED)
    table[Op.CONST] = lambda value, type_: dtype(value) if type_ is Type.REAL else base(value, type_)
    return table


# -- Int arithmetic in int64, checked ------------------------------------------------------
# An Int is an integer (Python ints in `a.combine` and `run_sequential`); here it is an
# int64, and an operation whose exact result leaves int64 raises OverflowError (named
# with the field by `_overflow`) instead of wrapping around.

class IntOverflow(Thm3Error, OverflowError):
    """An Int operation whose exact result leaves int64 (an `OverflowError` too)."""


def _signed(*xs) -> bool:
    return all(np.asarray(x).dtype.kind == "i" for x in xs)


def _checked_add(a, b):
    r = np.add(a, b)
    if _signed(a, b, r) and np.any(((a ^ r) & (b ^ r)) < 0):
        raise IntOverflow("+")
    return r


def _checked_sub(a, b):
    r = np.subtract(a, b)
    if _signed(a, b, r) and np.any(((a ^ b) & (a ^ r)) < 0):
        raise IntOverflow("-")
    return r


def _checked_mul(a, b):
    r = np.multiply(a, b)
    if _signed(a, b, r):
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        nonzero = a != 0
        back = np.where(nonzero, r // np.where(nonzero, a, 1), b)
        lo = np.iinfo(np.int64).min
        if np.any(back != b) or np.any(((a == -1) & (b == lo)) | ((b == -1) & (a == lo))):
            raise IntOverflow("*")
    return r


def _checked_neg(a):
    if _signed(a) and np.any(np.asarray(a) == np.iinfo(np.int64).min):
        raise IntOverflow("-")
    return np.negative(a)


def _checked_abs(a):
    if _signed(a) and np.any(np.asarray(a) == np.iinfo(np.int64).min):
        raise IntOverflow("abs")
    return np.abs(a)


def _checked_pow(a, n):
    if n < 0 or not _signed(a):
        return NUMPY[Op.POW](a, n)
    r = np.ones_like(np.asarray(a))
    for _ in range(n):
        r = _checked_mul(r, a)
    return r


CHECKED: dict = NUMPY | {Op.ADD: _checked_add, Op.SUB: _checked_sub, Op.MUL: _checked_mul,
                         Op.NEG: _checked_neg, Op.ABS: _checked_abs, Op.POW: _checked_pow}


def _overflow(loop: Loop, fn: Fn, env: dict, table: dict, where: str) -> OverflowError:
    """The overflow of an Int field in `fn` (left or the combine) on `env`, named: the
    first Int field whose new value leaves int64."""
    names = [f.name for f in loop.fields]
    for name, out in zip(names, fn.outputs):
        if out.type is not Type.INT:
            continue
        try:
            with quiet():
                v = np.asarray(evaluate([out], env, table)[0])
            if v.dtype == object:
                v.astype(np.int64)
        except OverflowError:
            return OverflowError(f"{loop.name}: the Int field {name} overflows int64 in {where} "
                                 f"(the NumPy backend computes Ints in int64; a.combine and the "
                                 f"sequential fold compute them exactly)")
    return OverflowError(f"{loop.name}: an Int value overflows int64 in {where}")


def field_dtype(type_: Type, real):
    match type_:
        case Type.BOOL:
            return np.bool_
        case Type.INT:
            return np.int64
        case Type.REAL | Type.VEC:
            return real or np.float64
        case _:
            raise ValueError(f"no dtype for {type_}")


def param_values(loop: Loop, params: dict, dtype) -> dict:
    missing = [p.name for p in loop.params if p.name not in params]
    if missing:
        raise UsageError(f"{loop.name}: missing loop parameters {', '.join(missing)}")
    out = {}
    for p in loop.params:
        value = np.asarray(params[p.name], dtype=field_dtype(p.type, dtype))
        out[p.name] = value if p.type is Type.VEC else value[()]
    return out


def _scalar_value(v, type_: Type, real, dim):
    """One field's value outside the batch: a NumPy scalar, or a (D,) array for a Vec."""
    if type_ is Type.VEC:
        v = np.asarray(v, dtype=real)
        return np.broadcast_to(v, (dim,)).copy() if v.ndim == 0 else v.reshape(-1).copy()
    return field_dtype(type_, real)(np.asarray(v).reshape(-1)[0] if np.ndim(v) else v)


def batched_identity(loop: Loop, lanes: int, dim, real) -> tuple:
    """The identity in `lanes` lanes, as read-only broadcast views (states are never
    written in place, and a chunk's first step then reads no fresh memory)."""
    out = []
    for f, e in zip(loop.fields, initial_state(loop)):
        if f.type is Type.VEC:
            out.append(np.broadcast_to(np.full((1, dim), e.arg, dtype=real), (lanes, dim)))
        else:
            out.append(np.broadcast_to(np.full((1, 1), e.arg, dtype=field_dtype(f.type, real)), (lanes, 1)))
    return tuple(out)


def _conform(values, like: tuple) -> tuple:
    """Outputs in the shape and dtype of the state they replace (a constant output, or an
    Int sum that NumPy promoted, is brought back)."""
    out = []
    for v, old in zip(values, like):
        if not isinstance(v, np.ndarray) or v.shape != old.shape:
            v = np.broadcast_to(np.asarray(v, dtype=old.dtype), old.shape)
        elif v.dtype != old.dtype:
            v = v.astype(old.dtype)
        out.append(v)
    return tuple(out)


def _unbatch(loop: Loop, states: tuple) -> tuple:
    return tuple(s[0].copy() if f.type is Type.VEC else s[0, 0] for f, s in zip(loop.fields, states))
