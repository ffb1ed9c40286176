"""A proved combine across a Dask cluster (the optional extra `thm3[dask]`): the reduction
as chunk / combine / aggregate, and the scan as chunk totals, carried prefixes and chunk
scans, over `dask.array` inputs.  Both return lazy Dask objects; `.compute()` gives what
`Analysis.run` and `Analysis.scan` give.

- chunk: the blocked left fold of one chunk (Numba where it is installed, else NumPy;
  CuPy-backed chunks on the GPU), its `Index` counted from the chunk's place in the list;
- combine: the synthesized combine over `split_every` adjacent partial states at a time,
  folded left to right, so a group never reorders its members and groups stay in list
  order level by level;
- aggregate: `result` of the final state.

The scan is a reduce-then-scan over chunks: every chunk's total, the exclusive prefix of
the totals in order (each carry the combine of the one before it with that chunk's
total), then each chunk scanned locally and every local prefix combined with its carry
on the left.  It builds its graph from the same three tasks as the reduction rather than
with `dask.array.cumreduction`, whose binop takes one array, not a State of several.
"""
from __future__ import annotations

import numpy as np

from thm3.ir import Type

DEFAULT_SPLIT_EVERY = 8


def reduce(a, *arrays, split_every: int = DEFAULT_SPLIT_EVERY, backend: str | None = None,
           **params):
    """The loop's result over Dask arrays (one per element parameter), as a lazy
    `dask.delayed` value: chunk folds, then combines of `split_every` adjacent partials."""
    import dask
    if split_every < 2:
        raise ValueError("split_every must be >= 2")
    loop, fn = _combine_of(a)
    blocks, offsets = _blocks(loop, arrays)
    fold = dask.delayed(_chunk_state, pure=True)
    states = [fold(loop, fn, offset, backend, params, *chunk) for chunk, offset in zip(blocks, offsets)]
    if not states:
        states = [dask.delayed(_identity, pure=True)(loop, _dim(loop, arrays, params))]
    merge = dask.delayed(combine_group, pure=True)
    while len(states) > 1:
        states = [merge(loop, fn, params, *states[i:i + split_every])
                  for i in range(0, len(states), split_every)]
    return dask.delayed(_aggregate, pure=True)(loop, params, states[0])


def scan(a, *arrays, result: bool = False, backend: str | None = None, **params):
    """Every prefix over Dask arrays: a State of lazy Dask arrays (length n, n x D for a
    Vec), or with result=True the lazy array of prefix results."""
    import dask
    import dask.array as da
    loop, fn = _combine_of(a)
    blocks, offsets = _blocks(loop, arrays)
    dim = _dim(loop, arrays, params)
    total = dask.delayed(_chunk_state, pure=True)
    local = dask.delayed(_chunk_scan, pure=True)
    merge = dask.delayed(combine_group, pure=True)
    carry = dask.delayed(_identity, pure=True)(loop, dim)
    lengths = _lengths(arrays)
    parts = []
    for chunk, offset in zip(blocks, offsets):
        parts.append(local(loop, fn, offset, backend, params, carry, *chunk))
        carry = merge(loop, fn, params, carry, total(loop, fn, offset, backend, params, *chunk))
    fields = []
    from thm3.backends.numpy_tree import _dtype
    for k, f in enumerate(loop.fields):
        kind = _dtype(f.type, np.float64)
        pieces = [da.from_delayed(part[k], shape=(m, dim) if f.type is Type.VEC else (m,), dtype=kind)
                  for part, m in zip(parts, lengths)]
        fields.append(da.concatenate(pieces) if pieces else
                      da.zeros((0, dim) if f.type is Type.VEC else (0,), dtype=kind))
    if not result:
        return a.State(*fields)
    return _prefix_results(loop, params, parts, lengths, dim)


# --- the three tasks ----------------------------------------------------------------------

def _chunk_state(loop, fn, offset, backend, params, *chunk):
    """The blocked left fold of one chunk: its state."""
    match _chunk_backend(backend, chunk):
        case "cupy":
            return _cupy_chunk_state(loop, fn, offset, params, chunk)
        case "numba":
            from thm3.backends.numba_tree import run_numba
            return run_numba(loop, fn, list(chunk), params, offset=offset)
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


def _aggregate(loop, params, state):
    from thm3.backends.numpy_tree import apply_result
    return apply_result(loop, state, params)


def _chunk_scan(loop, fn, offset, backend, params, carry, *chunk):
    """The chunk's local prefixes, each combined with the carried prefix on its left."""
    from thm3.backends.states import combine_states
    match _chunk_backend(backend, chunk):
        case "numba":
            from thm3.backends.numba_tree import scan_numba
            local = scan_numba(loop, fn, list(chunk), params, offset=offset)
        case _:
            from thm3.backends.scan import scan_parallel
            local = scan_parallel(loop, fn, [np.asarray(c) for c in chunk], params, offset=offset)
    if len(local[0]) == 0:
        return local
    return combine_states(loop, fn, carry, local, params, _as_tuple)


def _identity(loop, dim):
    from thm3.backends.numpy_tree import identity
    return identity(loop, dim=dim)


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
        raise ValueError(f"{a.loop.name}: no combine ({a.verdict}): {a.reason}")
    return a.loop, a.combine_fn


def _blocks(loop, arrays):
    """Per chunk, one block of every array (rechunked to the first array's chunks along
    the list, whole along a Vec's lanes); and each chunk's first position."""
    import dask.array as da
    data = [p for p in loop.elements if not p.index]
    if len(arrays) != len(data):
        names = ", ".join(p.name for p in data)
        raise ValueError(f"{loop.name}: expected {len(data)} arrays ({names}), got {len(arrays)}")
    if not arrays:
        raise ValueError(f"{loop.name}: only Index elements; pass a Dask array to count")
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


def _prefix_results(loop, params, parts, lengths, dim):
    """`result` of every prefix, chunk by chunk, as a lazy array (a tuple of them for a
    result with several values)."""
    import dask
    import dask.array as da
    from thm3.backends.numpy_tree import _dtype
    from thm3.backends.scan import prefix_results
    empty = tuple(np.zeros((0, dim) if f.type is Type.VEC else (0,), dtype=_dtype(f.type, np.float64))
                  for f in loop.fields)
    sample = prefix_results(loop, empty, params)
    samples = sample if isinstance(sample, tuple) else (sample,)
    results = [dask.delayed(prefix_results, pure=True)(loop, part, params) for part in parts]
    out = []
    for k, s in enumerate(samples):
        pieces = [da.from_delayed(r[k] if isinstance(sample, tuple) else r,
                                  shape=(m,) + s.shape[1:], dtype=s.dtype)
                  for r, m in zip(results, lengths)]
        out.append(da.concatenate(pieces) if pieces else da.zeros(s.shape, dtype=s.dtype))
    return tuple(out) if isinstance(sample, tuple) else out[0]
