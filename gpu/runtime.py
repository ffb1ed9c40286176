"""Running an analysed loop on the GPU: the emitted module built in memory and its
`reduce` called (`Analysis.run(..., backend="cupy")`).  CuPy is imported by the module
on first use; without a device the call fails with CuPy's own error."""
from __future__ import annotations

import sys
import types

from . import render as R
from .emit import render_module

_modules: dict = {}


def module_for(analysis, *, dtype: str = "float32", dim: int | None = None):
    """The emitted module for this analysis (cached per loop, dtype and dim)."""
    key = (id(analysis), dtype, dim)
    mod = _modules.get(key)
    if mod is None:
        loop, combine = analysis.loop, analysis.combine_fn
        source = R.render(loop, combine, dtype=dtype, dim=dim)
        text = render_module(loop, combine, source, dtype=dtype, dim=dim)
        mod = types.ModuleType(f"thm3_emitted_{loop.name}")
        sys.modules[mod.__name__] = mod
        exec(compile(text, f"<thm3 emitted {loop.name}>", "exec"), mod.__dict__)  # thm3's own output
        _modules[key] = mod
    return mod


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
    return module_for(analysis, dtype=dtype, dim=dim).reduce(*arrays, **params)
