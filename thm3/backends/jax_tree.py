"""`backend="jax"`: the scan and the reduction by the module `thm3 emit --target jax`
writes (`jax_module.render`), loaded from its text and called with `jax.enable_x64` on:
Ints in int64, Reals in float64 (a.run: float32 where every Real input is float32, as on
NumPy).  The optional extra `thm3[jax]`.

The module is thm3's own rendering of the IR, executed as a fresh module object; the
user's loop file is never imported or run."""
from __future__ import annotations

import types

import numpy as np

from thm3.backends.numpy_tree import Inputs, field_dtype
from thm3.errors import BackendUnavailable
from thm3.ir import Fn, Loop, Type
from thm3.ir.cache import Bounded

_LOADED = Bounded(64)       # (loop, combine), equal by structure -> the module


def _jax():
    try:
        import jax
    except ImportError:
        raise BackendUnavailable("backend='jax' needs JAX: pip install 'thm3[jax]'") from None
    return jax


def module(loop: Loop, combine: Fn):
    """The loaded JAX module of this loop and combine (remembered)."""
    got = _LOADED.get((loop, combine))
    if got is None:
        from thm3.backends.jax_module import render
        _jax()
        text = render(loop, combine)
        got = types.ModuleType(f"thm3_jax_{loop.name}")
        got.__file__ = f"<thm3 jax module of {loop.name}>"
        exec(compile(text, got.__file__, "exec"), got.__dict__)    # thm3's own rendering of the IR
        got.SOURCE = text
        got = _LOADED.put((loop, combine), got)
    return got


def _call(loop: Loop, combine: Fn, arrays, params: dict, n, dim, offset: int, prefixes: bool, lanes,
          dtype=np.float64):
    jax = _jax()
    data = Inputs(loop, arrays, params, dtype, n, dim, offset)      # checked as on NumPy
    mod = module(loop, combine)
    lanes = mod.LANES if lanes is None else lanes
    columns = [a for p, a in zip(loop.elements, data.element_arrays) if not p.index]
    with jax.enable_x64(True):
        if prefixes:
            out = mod.scan(*columns, n=data.n, dim=data.dim, offset=data.offset, lanes=lanes, **data.params)
        else:
            out = mod.reduce_state(*columns, n=data.n, dim=data.dim, offset=data.offset, lanes=lanes, **data.params)
        return tuple(np.asarray(v, dtype=dtype if f.type is Type.VEC else field_dtype(f.type, dtype))
                     for v, f in zip(out, loop.fields))


def scan_jax(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
             dim: int | None = None, offset: int = 0, lanes: int | None = None) -> tuple:
    """Every prefix state, one array a field: runs folded with `left`, their totals
    scanned in list order (the module's `exclusive`), the runs folded again from their
    prefixes."""
    return _call(loop, combine, arrays, params, n, dim, offset, True, lanes)


def run_jax(loop: Loop, combine: Fn, arrays, params: dict, *, n: int | None = None,
            dim: int | None = None, offset: int = 0, lanes: int | None = None, dtype=np.float64) -> tuple:
    """The final state: runs folded with `left`, then a tree of combines over their
    totals, neighbours in list order; Reals in `dtype`."""
    state = _call(loop, combine, arrays, params, n, dim, offset, False, lanes, np.dtype(dtype).type)
    return tuple(s if f.type is Type.VEC else s[()] for s, f in zip(state, loop.fields))


__all__ = ["module", "run_jax", "scan_jax"]
