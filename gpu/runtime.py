"""Running an analysed loop on the GPU: the emitted module built in memory and its
`reduce` called (`Analysis.run(..., backend="cupy")`).  CuPy is imported by the module
on first use; without CuPy or a device the call raises `thm3.errors.BackendUnavailable`,
naming the extra that installs CuPy."""
from __future__ import annotations

import sys
import types

from thm3.errors import BackendUnavailable

from . import render as R
from .emit import render_module

# Emitted modules by their own text: two loops share a module only when their kernels and
# launchers are the same text.  (Keyed by id(analysis) they were not: an analysis freed by
# the garbage collector left its id, and its module, to the next one.)
_modules: dict[str, types.ModuleType] = {}


def module_for(analysis, *, dtype: str = "float32", dim: int | None = None):
    """The emitted module for this analysis (cached per module text)."""
    loop, combine = analysis.loop, analysis.combine_fn
    certified = getattr(analysis, "stability", {}).get("exp_overflow") == "proved"
    source = R.render(loop, combine, dtype=dtype, dim=dim, exp_nonpositive=certified)
    text = render_module(loop, combine, source, dtype=dtype, dim=dim)
    mod = _modules.get(text)
    if mod is None:
        mod = types.ModuleType(f"thm3_emitted_{loop.name}_{len(_modules)}")
        sys.modules[mod.__name__] = mod
        exec(compile(text, f"<thm3 emitted {loop.name}>", "exec"), mod.__dict__)  # thm3's own output
        _modules[text] = mod
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
    mod = module_for(analysis, dtype=dtype, dim=dim)
    try:
        return mod.reduce(*arrays, **params)
    except mod.BackendUnavailable as err:          # the emitted module's own, self-contained
        raise BackendUnavailable(str(err)) from None
