"""A proved combine across a Dask cluster (the optional extra `thm3[dask]`): the reduction
as chunk / combine / aggregate, and the scan as chunk totals, carried prefixes and chunk
scans, over `dask.array` inputs.  Both return one lazy Dask object each; its `.compute()`
(or `dask.compute`, `client.compute`) gives what `Analysis.run` and `Analysis.scan` give:
`reduce` a `dask.delayed` value, `scan` a `LazyState` (a Dask collection of one lazy
array a field, computed together into a State), or with result=True the lazy array of
prefix results (a `LazyState` of them for a result of several values).

- chunk: the blocked left fold of one chunk (Numba where it is installed, without
  threads: a worker's parallelism is its processes; else NumPy;
  CuPy-backed chunks on the GPU), its `Index` counted from the chunk's place in the list;
- combine: the synthesized combine over `split_every` adjacent partial states at a time,
  folded left to right, so a group never reorders its members and groups stay in list
  order level by level;
- aggregate: `result` of the final state.

The scan is a reduce-then-scan over chunks: every chunk's total, the exclusive prefix of
the totals in order in one small task (each carry the combine of the one before it with
that chunk's total), then each chunk scanned from its carry.

Where a chunk's total, a carried state or a combine leaves the proof's cover (a NaN, or
an infinity other than the identity's: thm3/backends/guard.py), the chunks are joined in
order instead (`_in_order`): the combine where the states are covered, and otherwise the
chunk folded from the carried state, its blocks computed again inside that task with
the synchronous scheduler.  A merge of the reduction then gives `_Uncovered`, and the
aggregate, which also holds the chunk totals, joins them so.  It builds its graph from the same tasks as the reduction
rather than with `dask.array.cumreduction`, whose binop takes one array, not a State.

Every task gets the loop and its combine as one `_Spec`, which Dask neither walks for
nested collections nor tokenizes node by node: with the IR itself as an argument, building
the graph of a 16-chunk reduction took over a second (Dask traversed and hashed the
loop's expression DAG once per task), several times the reduction itself.
"""
from __future__ import annotations

import hashlib

import numpy as np

from thm3.errors import UsageError
from thm3.ir import Type
from thm3.ir.cache import Bounded

DEFAULT_SPLIT_EVERY = 8


class _Spec:
    """The loop and its combine as one opaque task argument, with a digest for Dask's
    tokenizer: the loop's name, source, declarations and functions, and the combine."""

    __slots__ = ("loop", "fn", "token")

    def __init__(self, loop, fn):
        self.loop, self.fn = loop, fn
        parts = [loop.name, loop.source, repr(loop.fields), repr(loop.elements), repr(loop.params),
                 repr(loop.left.outputs), repr(loop.result.outputs if loop.result else None),
                 repr(fn.inputs), repr(fn.outputs)]
        text = "\0".join(parts)
        self.token = "thm3-" + hashlib.sha256(text.encode()).hexdigest()[:24]

    def __dask_tokenize__(self):
        return self.token

    def __getstate__(self):
        return (self.loop, self.fn, self.token)

    def __setstate__(self, state):
        # every task unpickles its own copy: keep the first one a process saw, so that
        # the backends' per-object caches (the Numba module) serve every later task
        loop, fn, token = state
        got = _SEEN.get(token)
        self.loop, self.fn = got if got is not None else _SEEN.put(token, (loop, fn))
        self.token = token


_SEEN = Bounded(64)


class LazyState:
    """Lazy prefix states (or prefix results) as one Dask collection: `fields` holds one
    lazy array a field (n, or n x D), and `.compute()` computes them together into
    `build(*arrays)` (the analysis's State, or a tuple); a field is also an attribute
    by name, and iterating gives the lazy fields.  `dask.compute`, `dask.persist` and `client.compute` take it too."""

    def __init__(self, build, names, fields):
        self._build, self._names, self.fields = build, tuple(names), tuple(fields)

    def __getattr__(self, name):
        names = self.__dict__.get("_names", ())
        if name in names:
            return self.fields[names.index(name)]
        raise AttributeError(name)

    def __iter__(self):            # the lazy fields, as a State of them would give
        return iter(self.fields)

    def __len__(self):
        return len(self.fields)

    def __repr__(self):
        inner = ", ".join(f"{k}={f!r}" for k, f in zip(self._names, self.fields))
        return f"LazyState({inner})"

    def __dask_graph__(self):
        from dask.highlevelgraph import HighLevelGraph
        return HighLevelGraph.merge(*[f.__dask_graph__() for f in self.fields])

    def __dask_keys__(self):
        return [f.__dask_keys__() for f in self.fields]

    def __dask_layers__(self):
        return tuple(layer for f in self.fields for layer in f.__dask_layers__())

    def __dask_tokenize__(self):
        return ("thm3.LazyState",) + tuple(f.name for f in self.fields)

    def __dask_postcompute__(self):
        return _build_state, (self._build, [f.__dask_postcompute__() for f in self.fields])

    def __dask_postpersist__(self):
        return _rebuild_lazy, (self._build, self._names, [f.__dask_postpersist__() for f in self.fields])

    @staticmethod
    def __dask_optimize__(dsk, keys, **kwargs):
        return dsk

    @staticmethod
    def __dask_scheduler__(dsk, keys, **kwargs):
        import dask.threaded
        return dask.threaded.get(dsk, keys, **kwargs)

    def compute(self, **kwargs):
        import dask
        return dask.compute(self, **kwargs)[0]

    def persist(self, **kwargs):
        import dask
        return dask.persist(self, **kwargs)[0]


def _build_state(results, build, finalizers):
    return build(*(f(r, *args) for r, (f, args) in zip(results, finalizers)))


def _rebuild_lazy(dsk, build, names, rebuilders, rename=None):
    fields = [f(dsk, *args, **({"rename": rename} if rename else {})) for f, args in rebuilders]
    return LazyState(build, names, fields)


def reduce(a, *arrays, split_every: int = DEFAULT_SPLIT_EVERY, backend: str | None = None,
           **params):
    """The loop's result over Dask arrays (one per element parameter), as a lazy
    `dask.delayed` value: chunk folds, then combines of `split_every` adjacent partials."""
    import dask
    if split_every < 2:
        raise UsageError("split_every must be >= 2")
    loop, fn = _combine_of(a)
    spec = _Spec(loop, fn)
    blocks, offsets = _blocks(loop, arrays)
    fold = dask.delayed(_chunk_state, pure=True)
    totals = [fold(spec, offset, backend, params, *chunk) for chunk, offset in zip(blocks, offsets)]
    dim = _dim(loop, arrays, params)
    states = totals or [dask.delayed(_identity, pure=True)(spec, dim)]
    merge = dask.delayed(_merge, pure=True)
    while len(states) > 1:
        states = [merge(spec, params, *states[i:i + split_every])
                  for i in range(0, len(states), split_every)]
    source = _Source(blocks, offsets, dim)
    return dask.delayed(_aggregate, pure=True)(spec, params, states[0], source, *totals)


def scan(a, *arrays, result: bool = False, backend: str | None = None, **params):
    """Every prefix over Dask arrays, as one lazy object: a `LazyState` whose `.compute()`
    is `a.scan(...)`'s State (its `fields` are the lazy arrays, length n, n x D for a
    Vec); with result=True the lazy array of prefix results (`.compute()` is
    `a.scan(..., result=True)`)."""
    spec, parts, lengths, dim = _scan_parts(a, arrays, backend, params)
    if result:
        return _prefix_results(spec, params, parts, lengths, dim)
    return LazyState(a.State, spec.loop.field_names, _fields(spec.loop, parts, lengths, dim))


def scan_arrays(a, *arrays, backend: str | None = None, **params) -> list:
    """The prefix states as one lazy Dask array a field, chunked as the input."""
    spec, parts, lengths, dim = _scan_parts(a, arrays, backend, params)
    return _fields(spec.loop, parts, lengths, dim)


def _scan_parts(a, arrays, backend, params):
    """Per chunk, a delayed State of its prefixes."""
    import dask
    loop, fn = _combine_of(a)
    spec = _Spec(loop, fn)
    blocks, offsets = _blocks(loop, arrays)
    dim = _dim(loop, arrays, params)
    total = dask.delayed(_chunk_state, pure=True)
    local = dask.delayed(_chunk_scan, pure=True)
    totals = [total(spec, offset, backend, params, *chunk) for chunk, offset in zip(blocks, offsets)]
    carries = dask.delayed(_exclusive, pure=True, nout=len(totals))(spec, params, _Source(blocks, offsets, dim),
                                                                    *totals)
    parts = [local(spec, offset, backend, params, carries[c], *chunk)
             for c, (chunk, offset) in enumerate(zip(blocks, offsets))]
    return spec, parts, _lengths(arrays), dim


def _fields(loop, parts, lengths, dim) -> list:
    import dask.array as da
    from thm3.backends.numpy_tree import field_dtype
    fields = []
    for k, f in enumerate(loop.fields):
        kind = field_dtype(f.type, np.float64)
        pieces = [da.from_delayed(part[k], shape=(m, dim) if f.type is Type.VEC else (m,), dtype=kind)
                  for part, m in zip(parts, lengths)]
        fields.append(da.concatenate(pieces) if pieces else
                      da.zeros((0, dim) if f.type is Type.VEC else (0,), dtype=kind))
    return fields


# --- the three tasks ----------------------------------------------------------------------

def _chunk_state(spec, offset, backend, params, *chunk):
    """The blocked left fold of one chunk: its state; `_Uncovered` where an input of the
    chunk is NaN or infinite, which the proof over the reals does not cover (the chunk is
    then folded from the state carried into it: `_in_order`)."""
    loop, fn = spec.loop, spec.fn
    if _has_specials(loop, params, chunk):
        return _Uncovered()
    match _chunk_backend(backend, chunk):
        case "cupy":
            return _cupy_chunk_state(loop, fn, offset, params, chunk)
        case "numba":
            from thm3.backends.numba_tree import run_numba
            return run_numba(loop, fn, list(chunk), params, offset=offset, threads=False)
        case _:
            from thm3.backends.numpy_tree import run_parallel
            return run_parallel(loop, fn, list(chunk), params, offset=offset)


def combine_group(loop, fn, params, *states):
    """Adjacent partial states combined left to right: ((s0 . s1) . s2) . ..."""
    from thm3.backends.states import combine_states
    out = states[0]
    for s in states[1:]:
        out = combine_states(loop, fn, out, s, params, _as_tuple)
    return out


def _exclusive(spec, params, source, *totals):
    """Carry c: the state of the list before chunk c (the identity for c = 0), by
    `_in_order`."""
    return tuple(_in_order(spec, params, source, totals)[0])


def _in_order(spec, params, source, totals) -> tuple[list, tuple]:
    """(the state carried into each chunk, the state after the last) from the chunk
    totals, in list order: a total joins by the combine where the carried state, the
    total and their combine are covered by the proof (thm3/backends/guard.py), and the
    chunk is otherwise folded from the carried state, its blocks computed here, in this
    task, with the synchronous scheduler (their graph again: the rare case of a NaN or an
    infinity at a chunk's join)."""
    import dask
    from thm3.backends.numpy_tree import Inputs, identity, reduce_carried, value_table
    from thm3.backends.states import combine_states
    loop, fn = spec.loop, spec.fn
    carry, carries = identity(loop, dim=source.dim), []
    for t, chunk, offset in zip(totals, source.blocks, source.offsets):
        carries.append(carry)
        if not isinstance(t, _Uncovered) and _covered(loop, carry) and _covered(loop, t):
            joined = combine_states(loop, fn, carry, t, params, _as_tuple)
            if _covered(loop, joined):
                carry = joined
                continue
        arrays = [np.asarray(a.get() if hasattr(a, "get") else a) for a in dask.compute(*chunk, scheduler="sync")]
        data = Inputs(loop, arrays, params, np.float64, None, source.dim, offset)
        from thm3.backends.guard import one_lane
        state = reduce_carried(loop, fn, data, value_table(np.float64), start=one_lane(loop, carry, np.float64))
        carry = tuple(s[0].copy() if f.type is Type.VEC else s[0, 0] for f, s in zip(loop.fields, state))
    return carries, carry


def _has_specials(loop, params, chunk) -> bool:
    data = [p for p in loop.elements if not p.index]
    real = (Type.REAL, Type.VEC)
    return (any(p.type in real and not bool(np.isfinite(np.asarray(params[p.name], dtype=float)).all())
                for p in loop.params)
            or any(p.type in real and not bool(np.isfinite(c).all()) for p, c in zip(data, chunk)))


def _covered(loop, state) -> bool:
    from thm3.backends.guard import any_uncovered, one_lane
    return not any_uncovered(loop, one_lane(loop, state, np.float64))


class _Uncovered:
    """What a merge gives where a state or a combine leaves the proof's cover
    (thm3/backends/guard.py): the aggregate then joins the chunks in order (`_in_order`)."""

    def __reduce__(self):
        return (_Uncovered, ())


def _merge(spec, params, *states):
    from thm3.backends.states import combine_states
    loop = spec.loop
    if any(isinstance(s, _Uncovered) or not _covered(loop, s) for s in states):
        return _Uncovered()
    out = states[0]
    for s in states[1:]:
        out = combine_states(loop, spec.fn, out, s, params, _as_tuple)
        if not _covered(loop, out):
            return _Uncovered()
    return out


def _aggregate(spec, params, state, source, *totals):
    from thm3.backends.numpy_tree import apply_result
    if isinstance(state, _Uncovered):
        state = _in_order(spec, params, source, totals)[1]
    return apply_result(spec.loop, state, params)


class _Source:
    """The chunks' blocks (`dask.delayed`) and first positions, as one opaque task argument:
    Dask neither computes them for the task nor moves them to it; `_in_order` computes
    the blocks it must fold."""

    __slots__ = ("blocks", "offsets", "dim", "token")

    def __init__(self, blocks, offsets, dim):
        self.blocks, self.offsets, self.dim = [tuple(b) for b in blocks], list(offsets), dim
        self.token = "thm3-source-" + hashlib.sha256(
            repr([[str(d.key) for d in b] for b in self.blocks]).encode()).hexdigest()[:24]

    def __dask_tokenize__(self):
        return self.token


def _chunk_scan(spec, offset, backend, params, carry, *chunk):
    """The chunk's prefixes, folded from the state carried into it (guarded as
    thm3/backends/guard.py says: a NaN or an infinity at the chunk's start is the loop's)."""
    loop, fn = spec.loop, spec.fn
    match _chunk_backend(backend, chunk):
        case "numba":
            from thm3.backends.numba_tree import scan_numba
            return scan_numba(loop, fn, list(chunk), params, offset=offset, threads=False, start=carry)
        case _:
            from thm3.backends.scan import scan_numpy
            return scan_numpy(loop, fn, [np.asarray(c) for c in chunk], params, offset=offset, start=carry)


def _chunk_results(spec, part, params):
    from thm3.backends.scan import prefix_results
    return prefix_results(spec.loop, part, params)


def _identity(spec, dim):
    from thm3.backends.numpy_tree import identity
    return identity(spec.loop, dim=dim)


def _as_tuple(*fields):
    return tuple(fields)


def _cupy_chunk_state(loop, fn, offset, params, chunk):
    """A CuPy chunk reduced by the emitted CUDA kernel (a loop with an Index element is
    folded on the host instead: the kernel counts positions from 0)."""
    if any(p.index for p in loop.elements):
        from thm3.backends.numpy_tree import run_parallel
        return run_parallel(loop, fn, [c.get() for c in chunk], params, offset=offset)
    from thm3.backends.gpu import gpu
    return gpu().reduce_state_cupy(loop, fn, chunk, params)


def _chunk_backend(backend, chunk) -> str:
    if backend is not None:
        return backend
    if any(type(c).__module__.split(".")[0] == "cupy" for c in chunk):
        return "cupy"
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numpy"
    return "numba"


# --- inputs ---------------------------------------------------------------------------------

def _combine_of(a):
    if a.combine_fn is None:
        raise UsageError(f"{a.loop.name}: no combine ({a.verdict}): {a.reason}")
    return a.loop, a.combine_fn


def _blocks(loop, arrays):
    """Per chunk, one block of every array (rechunked to the first array's chunks along
    the list, whole along a Vec's lanes); and each chunk's first position."""
    import dask.array as da
    data = [p for p in loop.elements if not p.index]
    if len(arrays) != len(data):
        names = ", ".join(p.name for p in data)
        raise UsageError(f"{loop.name}: expected {len(data)} arrays ({names}), got {len(arrays)}")
    if not arrays:
        raise UsageError(f"{loop.name}: only Index elements; pass a Dask array to count")
    arrays = [da.asarray(x) for x in arrays]
    rows = arrays[0].chunks[0]
    lined = [x.rechunk((rows,) + tuple((s,) for s in x.shape[1:])) for x in arrays]
    blocks = [list(x.to_delayed().reshape(-1)) for x in lined]
    offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int).tolist() if rows else []
    return list(zip(*blocks)), offsets


def _lengths(arrays):
    import dask.array as da
    return list(da.asarray(arrays[0]).chunks[0])


def _dim(loop, arrays, params):
    import dask.array as da
    for p, x in zip([p for p in loop.elements if not p.index], arrays):
        if p.type is Type.VEC:
            return int(da.asarray(x).shape[1])
    for p in loop.params:
        if p.type is Type.VEC:
            return len(np.asarray(params[p.name]))
    return None


def _prefix_results(spec, params, parts, lengths, dim):
    """`result` of every prefix, chunk by chunk: one lazy array, or a `LazyState` of them
    (computed into a tuple) for a result with several values."""
    import dask
    import dask.array as da
    from thm3.backends.numpy_tree import field_dtype
    from thm3.backends.scan import prefix_results
    loop = spec.loop
    empty = tuple(np.zeros((0, dim) if f.type is Type.VEC else (0,), dtype=field_dtype(f.type, np.float64))
                  for f in loop.fields)
    sample = prefix_results(loop, empty, params)
    samples = tuple(sample) if isinstance(sample, tuple) else (sample,)
    results = [dask.delayed(_chunk_results, pure=True)(spec, part, params) for part in parts]
    out = []
    for k, s in enumerate(samples):
        pieces = [da.from_delayed(r[k] if isinstance(sample, tuple) else r,
                                  shape=(m,) + s.shape[1:], dtype=s.dtype)
                  for r, m in zip(results, lengths)]
        out.append(da.concatenate(pieces) if pieces else da.zeros(s.shape, dtype=s.dtype))
    if not isinstance(sample, tuple):
        return out[0]
    if loop.result is not None and loop.result_kind == "namedtuple":
        from thm3.backends.numpy_tree import result_class
        return LazyState(result_class(loop.result_class, loop.result_names), loop.result_names, out)
    return LazyState(_as_tuple, [f"r{k}" for k in range(len(out))], out)
