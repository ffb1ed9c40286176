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

When the combine is, field by field, a monoid that NumPy has as a ufunc applied to that
field alone (`a.f + b.f`, `a.f * b.f`, `max(a.f, b.f)`, `min(a.f, b.f)`, `a.f and b.f`,
`a.f or b.f`, read off the combine's IR), `scan_numpy` takes a shorter route
(`scan_accumulate`): every element's leaf state `left(init, x)`, then `ufunc.accumulate`
of the leaves field by field, in list order (the same law gives prefix i =
combine(prefix i-1, leaf i)).  Any other combine (a field that reads another field, a
non-commutative one, `Index` bookkeeping such as argmax's) takes the blocked scan.
"""
from __future__ import annotations

import numpy as np

from thm3.backends.guard import Span, any_uncovered, carry, one_lane, specials
from thm3.backends.numpy_tree import (Inputs, Plan, Tree, batched_identity, field_dtype, fold_sequential,
                                      param_values, value_table)
from thm3.errors import BackendUnavailable, UsageError
from thm3.ir import Fn, Loop, Op, Type
from thm3.ir.monoids import MONOIDS
from thm3.semantics.evaluate import NUMPY, evaluate, quiet

# Runs folded side by side.  Every step of the two folds reads one element of each run, a
# cache line apart; this many lines stay in a core's L2 cache across the steps that
# share them (bench/scan.py measured 2**10 to 2**14 on 10**7 elements).
DEFAULT_LANES = 1 << 12

# Elements whose leaves are made and accumulated at a time in `scan_accumulate` (they
# stay in the cache between the two).
ACCUMULATE_CHUNK = 1 << 16

# Combine outputs that are one ufunc of one field's two operands.  max and min must read
# (a.f, b.f) in that order: the IR's max(a, b), like numpy.maximum(a, b), gives b on ties,
# which decides the sign of a zero.  The others commute in IEEE arithmetic.
_MONOIDS = {m.op: getattr(np, m.ufunc) for m in MONOIDS}
_COMMUTATIVE = tuple(m.op for m in MONOIDS if m.commutative)


def scan_parallel(loop: Loop, combine: Fn, arrays, params: dict, *, lanes: int = DEFAULT_LANES,
                  dtype=np.float64, n: int | None = None, dim: int | None = None,
                  offset: int = 0, start=None) -> tuple:
    """The states after every element, as arrays (one per field, of shape (n,) or (n, D)),
    computed by the blocked scan of the module docstring; `offset` is the first element's
    position in the whole list (see `numpy_tree.run_parallel`).  `start` (a state; the
    identity by default) is the state before these elements, the list's part before
    them (a Dask chunk's carry): runs are then carried from it by `guard.carry`."""
    if lanes < 1:
        raise UsageError("lanes must be >= 1")
    dtype = np.dtype(dtype).type
    data = Inputs(loop, arrays, params, dtype, n, dim, offset)
    table = value_table(dtype)
    if data.n == 0:
        return _empty(loop, data.dim, dtype)
    length = -(-data.n // min(lanes, data.n))          # run length L
    runs = -(-data.n // length)
    plan = Plan(loop, data, length, table, combine)
    tree = Tree(loop, combine, data, table)
    with quiet():
        totals = plan.fold_runs(0, data.n)
        carried = exclusive_scan(tree, totals) if start is None else None
        special = specials(loop, data)
        if carried is None or tree.uncovered or any_uncovered(loop, totals) or special is not None:  # `guard`
            bounds = [min(data.n, r * length) for r in range(runs + 1)]
            carried, _ = carry(loop, tree, totals, bounds, Span(loop, data, dtype, table, combine),
                               start=None if start is None else one_lane(loop, start, dtype), special=special)
        record = [np.empty((runs, length, data.dim) if f.type is Type.VEC else (runs, length),
                           dtype=s.dtype) for f, s in zip(loop.fields, totals)]
        plan.fold_runs(0, data.n, start=carried, record=record)
    return tuple(r.reshape((runs * length,) + r.shape[2:])[:data.n] for r in record)


def monoid_ufuncs(loop: Loop, combine: Fn) -> list | None:
    """One ufunc per field when every output of the combine is that ufunc of the field's
    own two operands (a.f op b.f), with the field's type; else None.  An Int sum or
    product qualifies only where the fields' bounds prove it stays in int64 (a count):
    `accumulate` would wrap, where the blocked scan checks it."""
    from thm3.analysis.int_bounds import unchecked
    in_range = unchecked(loop, combine, combine.outputs, "combine")
    ufuncs = []
    for f, e in zip(loop.fields, combine.outputs):
        a, b = f"a.{f.name}", f"b.{f.name}"
        if e.op not in _MONOIDS or e.type is not f.type or len(e.src) != 2:
            return None
        if any(s.op is not Op.VAR or s.type is not f.type for s in e.src):
            return None
        names = tuple(s.arg for s in e.src)
        if names != (a, b) and not (names == (b, a) and e.op in _COMMUTATIVE):
            return None
        if e.op in (Op.AND, Op.OR) and f.type is not Type.BOOL:
            return None
        if e.op in (Op.ADD, Op.MUL) and f.type is Type.INT and e not in in_range:
            return None
        ufuncs.append(_MONOIDS[e.op])
    return ufuncs if len(ufuncs) == len(loop.fields) == len(combine.outputs) else None


def scan_numpy(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
               dim: int | None = None, offset: int = 0, start=None) -> tuple:
    """The prefix states on NumPy: `scan_accumulate` when the combine is a monoid ufunc
    field by field (`monoid_ufuncs`), else the blocked scan `scan_parallel`; from a
    `start` state, `scan_parallel`'s."""
    ufuncs = monoid_ufuncs(loop, combine) if start is None else None
    if ufuncs is None:
        return scan_parallel(loop, combine, arrays, params, n=n, dim=dim, offset=offset, start=start)
    return scan_accumulate(loop, ufuncs, arrays, params, n=n, dim=dim, offset=offset, combine=combine)


def scan_accumulate(loop: Loop, ufuncs: list, arrays, params: dict, *, dtype=np.float64,
                    n: int | None = None, dim: int | None = None, offset: int = 0,
                    chunk: int | None = None, combine: Fn | None = None) -> tuple:
    """Every prefix state, for a combine that is `ufuncs[k]` on field k alone: the leaf
    states left(init, x_i) of a chunk of elements at once, the first one combined with
    the prefix carried from the chunk before, then `ufunc.accumulate` of each field.
    Given the `combine`, a leaf or a prefix outside the proof's cover (a NaN, or an
    infinity other than the identity's) hands the list to the guarded blocked scan
    (`scan_parallel`; see `guard`)."""
    dtype = np.dtype(dtype).type
    data = Inputs(loop, arrays, params, dtype, n, dim, offset)
    if data.n == 0:
        return _empty(loop, data.dim, dtype)
    chunk = chunk or ACCUMULATE_CHUNK
    if combine is not None and specials(loop, data) is not None:      # an element the proof does not cover
        return scan_parallel(loop, combine, arrays, params, dtype=dtype, n=n, dim=dim, offset=offset)
    plan = Plan(loop, data, 1, value_table(dtype))      # runs of one element: the leaves
    outs = [np.empty((data.n, data.dim) if f.type is Type.VEC else (data.n,), dtype=field_dtype(f.type, dtype))
            for f in loop.fields]
    with quiet():
        for c0 in range(0, data.n, chunk):
            c1 = min(data.n, c0 + chunk)
            leaves = plan.fold_runs(c0, c1)
            for f, u, leaf, out in zip(loop.fields, ufuncs, leaves, outs):
                part = out[c0:c1]
                part[...] = leaf if f.type is Type.VEC else leaf[:, 0]
                if c0:
                    part[0] = u(out[c0 - 1], part[0])
                u.accumulate(part, axis=0, out=part)     # in place: element i reads i - 1 only
            if combine is not None and (any_uncovered(loop, leaves) or
                                        any_uncovered(loop, tuple(o[c0:c1, None] if o.ndim == 1 else o[c0:c1] for o in outs))):
                # a leaf or a prefix the proof does not cover: the guarded blocked scan (`guard`)
                return scan_parallel(loop, combine, arrays, params, dtype=dtype, n=n, dim=dim, offset=offset)
    return tuple(outs)


def scan_states(loop: Loop, combine: Fn, arrays, params: dict, *, backend: str = "numpy") -> tuple:
    """The prefix states on a backend: "numpy" (`scan_numpy`), "numba" (compiled, chunks in
    threads), "cupy" (the emitted CUDA scan; arrays come back as CuPy arrays) or "jax"
    (the module `thm3 emit --target jax` writes)."""
    match backend:
        case "numpy":
            return scan_numpy(loop, combine, arrays, params)
        case "numba":
            try:
                from thm3.backends.numba_tree import scan_numba
            except ImportError:
                raise BackendUnavailable("backend='numba' needs Numba: pip install 'thm3[cpu]'") from None
            return scan_numba(loop, combine, arrays, params)
        case "cupy":
            from thm3.backends.gpu import gpu           # renders CUDA; imports CuPy lazily
            return gpu().scan_cupy(loop, combine, arrays, params)
        case "jax":
            from thm3.backends.jax_tree import scan_jax
            return scan_jax(loop, combine, arrays, params)
        case _:
            raise UsageError(f"backend must be 'numpy', 'numba', 'cupy' or 'jax', not {backend!r}")


def exclusive_scan(tree: Tree, states: tuple) -> tuple:
    """State r becomes the combine of states 0 .. r-1 (the identity for r = 0), in order."""
    k, count = 1, len(states[0])
    while k < count:
        left = tuple(s[:-k] for s in states)
        right = tuple(s[k:] for s in states)
        merged = tree.pair(left, right)
        states = tuple(np.concatenate([s[:k], m]) for s, m in zip(states, merged))
        k *= 2
    first = batched_identity(tree.loop, 1, tree.data.dim, tree.real)
    return tuple(np.concatenate([f, s[:-1]]) for f, s in zip(first, states))


def _empty(loop: Loop, dim, real) -> tuple:
    return tuple(np.empty((0, dim) if f.type is Type.VEC else (0,), dtype=field_dtype(f.type, real))
                 for f in loop.fields)


def run_sequential_prefixes(loop: Loop, arrays, params: dict, *, n: int | None = None,
                            dim: int | None = None) -> tuple:
    """The plain left fold, element by element in float64 (as `run_sequential`), keeping
    the state after every element: the meaning of the scan."""
    rows: list = []
    data, _ = fold_sequential(loop, arrays, params, n=n, dim=dim, every=rows)
    if not rows:
        return _empty(loop, data.dim, np.float64)
    return tuple(np.stack([np.broadcast_to(np.asarray(r[k], dtype=np.float64), (data.dim,)) for r in rows])
                 if f.type is Type.VEC else np.array([r[k] for r in rows], dtype=field_dtype(f.type, np.float64))
                 for k, f in enumerate(loop.fields))


def prefix_results(loop: Loop, states: tuple, params: dict):
    """`result` applied to every prefix state (fields as arrays of length n): an array
    of length n (n x D for a Vec), or several in the shape `result` returns them (a tuple,
    a NamedTuple); the states themselves without a `result`."""
    if loop.result is None:
        return tuple(states)
    n = len(states[0])
    env = {f"acc.{f.name}": (np.asarray(s) if f.type is Type.VEC else np.asarray(s)[:, None])
           for f, s in zip(loop.fields, states)}
    env.update(param_values(loop, params, np.float64))
    with quiet():
        out = evaluate(loop.result.outputs, env, NUMPY)
    values = []
    for v, t in zip(out, loop.result_types):
        v = np.asarray(v)
        if t is Type.VEC:
            dim = v.shape[-1] if v.ndim else 1
            values.append(np.broadcast_to(v, (n, dim)).astype(np.float64))
        else:
            kind = {Type.BOOL: np.bool_, Type.INT: np.int64}.get(t, np.float64)
            flat = v[:, 0] if v.ndim == 2 else v if v.ndim == 1 else np.full(n, v)
            values.append(np.broadcast_to(flat, (n,)).astype(kind))
    from thm3.backends.numpy_tree import shaped_result
    return shaped_result(loop, values)


__all__ = ["ACCUMULATE_CHUNK", "DEFAULT_LANES", "exclusive_scan", "monoid_ufuncs", "prefix_results",
           "run_sequential_prefixes", "scan_accumulate", "scan_numpy", "scan_parallel", "scan_states"]
