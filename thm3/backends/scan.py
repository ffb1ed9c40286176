"""Every prefix of the list at once: the inclusive scan of a loop with a proved combine,
on NumPy.  It is the reduction of `numpy_tree` carried one step further (reduce, then
scan), and `run_sequential_prefixes` is the plain fold that it is tested against.

The blocked scan, as defined here:

1. cut the n elements into R runs of L consecutive elements (the last one padded and
   masked, as in `numpy_tree`) and fold every run from the identity with `left`, all
   runs side by side: the run totals;
2. an exclusive scan of the R totals with the combine: run r's carried prefix is the
   combine of runs 0 .. r-1, in list order (Hillis and Steele's doubling, each level
   combining state i - k on the left with state i on the right, so no two operands ever
   trade places: the combine need not commute);
3. fold every run again with `left`, now from its carried prefix, and keep the state
   after every step.  `left(h(xs), x) = combine(h(xs), left(init, x))` is one of the
   proved laws, so the state after element i is h(xs[:i + 1]); an `Index` element is
   the element's position in the whole list, so runs need no other correction.
"""
from __future__ import annotations

import numpy as np

from thm3.backends.numpy_tree import (PYTHON, Compiled, _batched_identity, _dtype, _Inputs,
                                      _param_values, _Plan, _py_value, _table,
                                      _Tree, identity)
from thm3.errors import BackendUnavailable, UsageError
from thm3.ir import Fn, Loop, Type
from thm3.semantics.evaluate import NUMPY, evaluate, quiet

# Runs folded side by side.  Every step of the two folds reads one element of each run, a
# cache line apart; this many lines stay in a core's L2 cache across the steps that
# share them (bench/scan.py measured 2**10 to 2**14 on 10**7 elements).
DEFAULT_LANES = 1 << 12


def scan_parallel(loop: Loop, combine: Fn, arrays, params: dict, *, lanes: int = DEFAULT_LANES,
                  dtype=np.float64, n: int | None = None, dim: int | None = None,
                  offset: int = 0) -> tuple:
    """The states after every element, as arrays (one per field, of shape (n,) or (n, D)),
    computed by the blocked scan of the module docstring; `offset` is the first element's
    position in the whole list (see `numpy_tree.run_parallel`)."""
    if lanes < 1:
        raise UsageError("lanes must be >= 1")
    dtype = np.dtype(dtype).type
    data = _Inputs(loop, arrays, params, dtype, n, dim, offset)
    table = _table(dtype)
    if data.n == 0:
        return _empty(loop, data.dim, dtype)
    length = -(-data.n // min(lanes, data.n))          # run length L
    runs = -(-data.n // length)
    plan = _Plan(loop, data, length, table)
    tree = _Tree(loop, combine, data, table)
    with quiet():
        totals = plan.fold_runs(0, data.n)
        carried = exclusive_scan(tree, totals)
        record = [np.empty((runs, length, data.dim) if f.type is Type.VEC else (runs, length),
                           dtype=s.dtype) for f, s in zip(loop.fields, totals)]
        plan.fold_runs(0, data.n, start=carried, record=record)
    return tuple(r.reshape((runs * length,) + r.shape[2:])[:data.n] for r in record)


def scan_states(loop: Loop, combine: Fn, arrays, params: dict, *, backend: str = "numpy") -> tuple:
    """The prefix states on a backend: "numpy" (this module), "numba" (compiled, chunks in
    threads) or "cupy" (the emitted CUDA scan; arrays come back as CuPy arrays)."""
    match backend:
        case "numpy":
            return scan_parallel(loop, combine, arrays, params)
        case "numba":
            try:
                from thm3.backends.numba_tree import scan_numba
            except ImportError:
                raise BackendUnavailable("backend='numba' needs Numba: pip install 'thm3[cpu]'") from None
            return scan_numba(loop, combine, arrays, params)
        case "cupy":
            from thm3.backends.gpu import gpu           # renders CUDA; imports CuPy lazily
            return gpu().scan_cupy(loop, combine, arrays, params)
        case _:
            raise UsageError(f"backend must be 'numpy', 'numba' or 'cupy', not {backend!r}")


def exclusive_scan(tree: _Tree, states: tuple) -> tuple:
    """State r becomes the combine of states 0 .. r-1 (the identity for r = 0), in order."""
    k, count = 1, len(states[0])
    while k < count:
        left = tuple(s[:-k] for s in states)
        right = tuple(s[k:] for s in states)
        merged = tree.pair(left, right)
        states = tuple(np.concatenate([s[:k], m]) for s, m in zip(states, merged))
        k *= 2
    first = _batched_identity(tree.loop, 1, tree.data.dim, tree.real)
    return tuple(np.concatenate([f, s[:-1]]) for f, s in zip(first, states))


def _empty(loop: Loop, dim, real) -> tuple:
    return tuple(np.empty((0, dim) if f.type is Type.VEC else (0,), dtype=_dtype(f.type, real))
                 for f in loop.fields)


def run_sequential_prefixes(loop: Loop, arrays, params: dict, *, n: int | None = None,
                            dim: int | None = None) -> tuple:
    """The plain left fold, element by element in float64 (as `run_sequential`), keeping
    the state after every element: the meaning of the scan."""
    data = _Inputs(loop, arrays, params, np.float64, n, dim)
    state = [_py_value(v, f.type) for v, f in zip(identity(loop, dim=data.dim), loop.fields)]
    names = [f"acc.{f.name}" for f in loop.fields]
    step = Compiled(loop.left.outputs, PYTHON)
    env = {k: _py_value(v, None) for k, v in data.params.items()}
    columns = [(p.name, None if p.index else (a if a.ndim > 1 else a.tolist()))
               for p, a in zip(loop.elements, data.element_arrays)]
    rows = []
    with quiet():
        for i in range(data.n):
            env.update(zip(names, state))
            for name, col in columns:
                env[name] = i if col is None else col[i]
            state = step(env)
            rows.append(state)
    if not rows:
        return _empty(loop, data.dim, np.float64)
    return tuple(np.stack([np.broadcast_to(np.asarray(r[k], dtype=np.float64), (data.dim,)) for r in rows])
                 if f.type is Type.VEC else np.array([r[k] for r in rows], dtype=_dtype(f.type, np.float64))
                 for k, f in enumerate(loop.fields))


def prefix_results(loop: Loop, states: tuple, params: dict):
    """`result` applied to every prefix state (fields as arrays of length n): an array
    of length n (n x D for a Vec), or a tuple of them; the states themselves without a
    `result`."""
    if loop.result is None:
        return tuple(states)
    n = len(states[0])
    env = {f"acc.{f.name}": (np.asarray(s) if f.type is Type.VEC else np.asarray(s)[:, None])
           for f, s in zip(loop.fields, states)}
    env.update(_param_values(loop, params, np.float64))
    with quiet():
        out = evaluate(loop.result.outputs, env, NUMPY)
    types = [loop.result_type] if len(out) == 1 else [e.type for e in loop.result.outputs]
    values = []
    for v, t, e in zip(out, types, loop.result.outputs):
        t = t or e.type
        v = np.asarray(v)
        if t is Type.VEC:
            dim = v.shape[-1] if v.ndim else 1
            values.append(np.broadcast_to(v, (n, dim)).astype(np.float64))
        else:
            kind = {Type.BOOL: np.bool_, Type.INT: np.int64}.get(t, np.float64)
            flat = v[:, 0] if v.ndim == 2 else v if v.ndim == 1 else np.full(n, v)
            values.append(np.broadcast_to(flat, (n,)).astype(kind))
    return values[0] if len(values) == 1 else tuple(values)


__all__ = ["DEFAULT_LANES", "exclusive_scan", "prefix_results", "run_sequential_prefixes",
           "scan_parallel", "scan_states"]
