"""The parallel form on the CPU at native speed: the IR rendered as plain scalar Python,
compiled by Numba (`backend="numba"`, the optional extra `thm3[cpu]`).

The reduction: the n elements are cut into chunks of CHUNK consecutive elements, one
thread a chunk (Numba's `prange`; `reduce_serial` and `scan_serial` are the same code
without threads, for one chunk and for Dask workers).  A chunk is folded with `left` as LANES contiguous
sub-runs stepped together (independent chains the core overlaps), which are combined in
order; then the chunk states are combined level by level, neighbours (2k, 2k + 1) with
the earlier one on the left and a level of odd length padded with the identity at its
end, as in `numpy_tree`.  The chunking depends on n only, so results do not depend on
the number of threads.  The scan folds the chunk totals, scans them exclusively in
order, and folds every chunk again from its carried prefix, keeping every state.

The module's text (`numba_module`) is written once under the user cache
($THM3_CACHE_DIR, else $XDG_CACHE_HOME/thm3/numba, else ~/.cache/thm3/numba), named by
the hash of its text, and compiled with `cache=True`: a second process loads the
machine code from disk instead of compiling again.  The text is rendered from the IR by
thm3 itself; the user's loop file is never imported or run.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
import uuid
from pathlib import Path

import numba  # noqa: F401  (the optional extra thm3[cpu]; without it this backend is unavailable)
import numpy as np

from thm3.backends.numba_module import render
from thm3.backends.numpy_tree import Inputs, field_dtype, identity
from thm3.errors import UsageError
from thm3.ir import Fn, Loop, Type
from thm3.ir.cache import Bounded

CHUNK = 1 << 16      # elements a thread folds before its state joins the tree


def run_numba(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
              dim: int | None = None, offset: int = 0, threads: bool | None = None) -> tuple:
    """The final state, computed as described in the module docstring (float64).
    `threads`: chunks in Numba's threads (True), or one after another in the calling
    thread (False: the same chunks and tree, so the same result); by default threads
    when there is more than one chunk."""
    data = Inputs(loop, arrays, params, np.float64, n, dim, offset)
    mod = compiled(loop, combine)
    args = _arguments(loop, data)
    reduce = mod.reduce if _threaded(threads, data.n) else mod.reduce_serial
    try:
        state = reduce(data.n, CHUNK, data.dim or 1, data.offset, *args)
    except SystemError:
        # an exception raised in Numba's threads (an Int overflow) reaches Python as a
        # SystemError without its message; the same chunks in one thread raise it whole
        if reduce is mod.reduce_serial:
            raise
        state = mod.reduce_serial(data.n, CHUNK, data.dim or 1, data.offset, *args)
    return _state(loop, state, data.dim)


def scan_numba(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
               dim: int | None = None, offset: int = 0, threads: bool | None = None,
               start=None) -> tuple:
    """Every prefix state: one array a field, (n,) or (n, D); `threads` as in `run_numba`.
    `start` (a state; the identity by default) is the state of the list before these
    elements: every chunk is then folded from start's combine with the chunks before it,
    so prefix i is combine(start, h(xs[:i + 1])) (for a Dask chunk and its carry)."""
    data = Inputs(loop, arrays, params, np.float64, n, dim, offset)
    mod = compiled(loop, combine)
    args = _arguments(loop, data)
    outs = tuple(np.empty((data.n, data.dim) if f.type is Type.VEC else (data.n,),
                          dtype=field_dtype(f.type, np.float64)) for f in loop.fields)
    starts = _start_values(loop, identity(loop, dim=data.dim) if start is None else start, data.dim)
    scan = mod.scan if _threaded(threads, data.n) else mod.scan_serial
    try:
        scan(data.n, CHUNK, data.dim or 1, data.offset, *starts, *outs, *args)
    except SystemError:             # as in `run_numba`: the message of a threaded overflow
        if scan is mod.scan_serial:
            raise
        mod.scan_serial(data.n, CHUNK, data.dim or 1, data.offset, *starts, *outs, *args)
    return outs


def _start_values(loop: Loop, state, dim) -> list:
    """A state as the compiled code's start arguments: each field in its own type."""
    values = list(state)
    if len(values) != len(loop.fields):
        raise UsageError(f"{loop.name}: a start state has {len(loop.fields)} fields, got {len(values)}")
    out = []
    for v, f in zip(values, loop.fields):
        match f.type:
            case Type.VEC:
                out.append(np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=np.float64), (dim or 1,))))
            case Type.INT:
                out.append(int(v))
            case Type.BOOL:
                out.append(bool(v))
            case _:
                out.append(float(v))
    return out


def _threaded(threads: bool | None, n: int) -> bool:
    """A parallel region costs a wake-up of every thread (milliseconds on a loaded
    machine): not worth it for a single chunk, nor inside a Dask worker, whose
    parallelism is its processes."""
    return n > CHUNK if threads is None else bool(threads)


def run_numba_sequential(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
                         dim: int | None = None) -> tuple:
    """The final state of the plain left fold, compiled from the same rendering of `left`
    (no chunks, no combine; the module is the one `run_numba` uses): a fast sequential
    reference and baseline."""
    data = Inputs(loop, arrays, params, np.float64, n, dim)
    mod = compiled(loop, combine)
    return _state(loop, mod.sequential(data.n, data.dim or 1, 0, *_arguments(loop, data)), data.dim)


def _arguments(loop: Loop, data: Inputs) -> list:
    """Element arrays (contiguous) then loop parameters, in the rendered order."""
    arrays = [np.ascontiguousarray(a) for p, a in zip(loop.elements, data.element_arrays)
              if not p.index]
    params = [data.params[p.name] for p in loop.params]
    params = [np.ascontiguousarray(v, dtype=np.float64) if p.type is Type.VEC else v.item()
              for v, p in zip(params, loop.params)]
    return arrays + params


def _state(loop: Loop, values, dim) -> tuple:
    out = []
    for v, f in zip(values, loop.fields):
        if f.type is Type.VEC:
            out.append(np.asarray(v, dtype=np.float64).copy())
        else:
            out.append(field_dtype(f.type, np.float64)(v))
    return tuple(out)


# --- the compiled module ----------------------------------------------------------------

def cache_dir() -> Path:
    base = os.environ.get("THM3_CACHE_DIR")
    if base:
        return Path(base) / "numba"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "thm3" / "numba"


_LOADED = Bounded(64)      # (loop, combine), equal by structure -> the module


def compiled(loop: Loop, combine: Fn):
    """The rendered module for this loop and combine, imported from the disk cache (and
    remembered: rendering costs about a millisecond and a chunk of a Dask array is often
    not much more)."""
    got = _LOADED.get((loop, combine))
    if got is None:
        got = _LOADED.put((loop, combine), _load(loop, combine))
    return got


_LOADING = threading.Lock()     # one thread writes and imports a module; the others wait for it


def _load(loop: Loop, combine: Fn):
    """The module, written (to a temporary file of this process and thread, then renamed
    into place, so that no reader sees a part of it) and executed in full before it is
    registered in `sys.modules`: a thread of Dask's threaded scheduler never finds a
    module half loaded."""
    text = render(loop, combine)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    name = f"thm3_numba_{loop.name}_{digest}"
    with _LOADING:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.py"
        if not path.exists():               # never rewritten: Numba's cache keys on the file's mtime
            tmp = folder / f".{name}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex}.tmp"
            tmp.write_text(text)
            os.replace(tmp, path)           # atomic: another process sees no file or the whole one
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)        # thm3's own rendering of the IR, not the loop file
        sys.modules[name] = mod
        return mod
