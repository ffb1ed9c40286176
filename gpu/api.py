"""The GPU stage as thm3 calls it: the one module of `gpu/` that `thm3/` imports, and only
through `thm3.backends.gpu` (lazily, on first use).  It joins the two halves of `gpu/`:
`render/` (text) and `runtime/` (compile and launch).

- `emit(loop, combine, outdir, ...)`: NAME.cu and NAME.py (the reduction and the scan);
- `emit_attention(analysis, shape, outdir, dim=...)`: NAME.cu and NAME.py (attention);
- `module_for(analysis, ...)`: that same emitted reduction module, built in memory;
- `run_cupy(analysis, *arrays, ...)`: `Analysis.run(..., backend="cupy")`;
- `scan_cupy(loop, combine, arrays, params)`, `reduce_state_cupy(...)`: the emitted
  module's scan and reduction on CuPy arrays (Analysis.scan, Dask's CuPy chunks);
- `attention(q, k, v, ..., merge_src=...)`: the attention kernels rendered with the
  derived merge, or their NumPy twin with `combine`;
- `nvrtc`: `available()` and `compile_cuda(source, arch=...)`, without a GPU.
CuPy is imported by the emitted modules on first use; without CuPy or a device the calls
raise `thm3.errors.BackendUnavailable`, naming the extra that installs CuPy."""
from __future__ import annotations

import functools
import itertools
import sys
import types
from pathlib import Path

from thm3.errors import BackendUnavailable
from thm3.ir import Fn, Loop, Type
from thm3.ir.cache import Bounded

from .render import cuda as R
from .render.attention import merge_source, render_attention
from .render.module import attention_module, reduction_module
from .runtime import attention as _runtime_attention
from .runtime import nvrtc  # noqa: F401  (part of the API: the compile check)


def emit(loop: Loop, combine: Fn, outdir, *, dtype: str = "float32",
         dim: int | None = None, exp_nonpositive: bool = False) -> tuple[Path, Path]:
    """Write DIR/NAME.cu and DIR/NAME.py for `loop` and its `combine`; returns both paths.
    `exp_nonpositive`: the stability certificate proved every exp argument <= 0."""
    _refuse_wide_literals(loop)
    source = R.render(loop, combine, dtype=dtype, dim=dim, exp_nonpositive=exp_nonpositive)
    module = reduction_module(loop, combine, source, dtype=dtype, dim=dim)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    cu_path, py_path = outdir / f"{loop.name}.cu", outdir / f"{loop.name}.py"
    cu_path.write_text(source)
    py_path.write_text(module)
    return cu_path, py_path


def _refuse_wide_literals(loop: Loop) -> None:
    from thm3.syntax.frontend import wide_int_literal
    err = wide_int_literal(loop, "the CUDA kernel")
    if err is not None:
        raise err


def emit_attention(analysis, shape, outdir, *, dim: int) -> tuple[Path, Path]:
    """Write DIR/NAME.cu (the main variant: bfloat16, non-causal) and DIR/NAME.py (every
    variant, the runtime and the NumPy combine) for a loop recognised as attention."""
    loop, combine = analysis.loop, analysis.combine_fn
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    lane = merge_source(loop, combine, shape)
    main_variant = render_attention(lane, dim=dim, dtype="bfloat16", causal=False)
    cu = outdir / f"{loop.name}.cu"
    cu.write_text(f"// {loop.title}\n// thm3: attention kernel (bfloat16, D = {dim}, non-causal) with the derived "
                  f"combine.\n// {shape.describe()}\n\n{main_variant}")
    py = outdir / f"{loop.name}.py"
    py.write_text(attention_module(loop, combine, shape, lane, dim=dim))
    return cu, py


# --- emitted modules built in memory ----------------------------------------------------
# By their own text: two loops share a module only when their kernels and launchers are the
# same text.  (Keyed by id(analysis) they were not: an analysis freed by the garbage
# collector left its id, and its module, to the next one.)
_modules = Bounded(64)
_made = itertools.count()      # a fresh name for each module made


def emitted_module(loop: Loop, combine: Fn, *, dtype: str, dim: int | None, exp_nonpositive: bool = False):
    """The emitted reduction module of `loop` and `combine`, built in memory (cached per text)."""
    _refuse_wide_literals(loop)
    source = R.render(loop, combine, dtype=dtype, dim=dim, exp_nonpositive=exp_nonpositive)
    text = reduction_module(loop, combine, source, dtype=dtype, dim=dim)
    mod = _modules.get(text)
    if mod is None:
        mod = types.ModuleType(f"thm3_emitted_{loop.name}_{next(_made)}")
        sys.modules[mod.__name__] = mod
        exec(compile(text, f"<thm3 emitted {loop.name}>", "exec"), mod.__dict__)  # thm3's own output
        _modules.put(text, mod)
    return mod


def module_for(analysis, *, dtype: str = "float32", dim: int | None = None):
    """The emitted module for this analysis (cached per module text)."""
    certified = getattr(analysis, "stability", {}).get("exp_overflow") == "proved"
    return emitted_module(analysis.loop, analysis.combine_fn, dtype=dtype, dim=dim, exp_nonpositive=certified)


def _call(mod, name: str, *args, **kwargs):
    """`mod.name(*args, **kwargs)`, the emitted module's own (self-contained)
    BackendUnavailable raised as thm3's."""
    try:
        return getattr(mod, name)(*args, **kwargs)
    except mod.BackendUnavailable as err:
        raise BackendUnavailable(str(err)) from None


def run_cupy(analysis, *arrays, dtype: str = "float32", **params):
    """The loop's result over `arrays`, reduced by the emitted CUDA kernel."""
    import numpy as np
    dim = None
    for d, arr in zip([e for e in analysis.loop.elements if not e.index], arrays):
        if d.type.value == "Vec":
            dim = int(np.shape(arr)[-1])
    for d in analysis.loop.params:
        if d.type.value == "Vec" and d.name in params:
            dim = int(np.shape(params[d.name])[-1])
    mod = module_for(analysis, dtype=dtype, dim=dim)
    return _call(mod, "reduce", *arrays, **params)


def _dtype_and_dim(loop: Loop, arrays, params):
    import numpy as np
    data = [p for p in loop.elements if not p.index]
    dim = None
    for p, a in zip(data, arrays):
        if p.type is Type.VEC:
            dim = int(a.shape[-1])
    for p in loop.params:
        if p.type is Type.VEC:
            dim = len(params[p.name])
    reals = [a for p, a in zip(data, arrays) if p.type in (Type.REAL, Type.VEC)]
    single = reals and all(np.dtype(a.dtype) == np.float32 for a in reals)
    return ("float32" if single else "float64"), dim


def scan_cupy(loop: Loop, combine: Fn, arrays, params: dict) -> tuple:
    """The prefix states on the GPU (CuPy arrays), in float32 when every Real array is."""
    dtype, dim = _dtype_and_dim(loop, arrays, params)
    return _call(emitted_module(loop, combine, dtype=dtype, dim=dim), "scan", *arrays, **params)


def reduce_state_cupy(loop: Loop, combine: Fn, arrays, params: dict) -> tuple:
    """The final state of CuPy arrays, by the emitted reduction."""
    dtype, dim = _dtype_and_dim(loop, arrays, params)
    return _call(emitted_module(loop, combine, dtype=dtype, dim=dim), "reduce_state", *arrays, **params)


# --- attention ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _rendered(merge_src: str, dim: int, dtype: str, causal: bool, num_warps: int) -> str:
    return render_attention(merge_src, dim=dim, dtype=dtype, causal=causal, num_warps=num_warps)


def attention_sources(merge_src: str, dim: int):
    """`sources(dtype, causal, num_warps)` for the runtime: variants rendered (once each)
    with the derived combine's merge."""
    def sources(dtype: str, causal: bool, num_warps: int) -> str:
        return _rendered(merge_src, dim, dtype, causal, num_warps)
    return sources


def attention(q, k, v, *, causal: bool = False, scale: float | None = None,
              splits: int | None = None, backend: str = "cupy", combine=None,
              merge_src: str | None = None):
    """`gpu/runtime/attention.attention` with its kernels rendered from `merge_src` (the
    derived combine's merge, `render.attention.merge_source`); backend="numpy" takes the
    derived `combine` as a Python callable instead."""
    sources = None if merge_src is None else attention_sources(merge_src, int(q.shape[-1]))
    return _runtime_attention.attention(q, k, v, causal=causal, scale=scale, splits=splits,
                                        backend=backend, combine=combine, sources=sources)
