"""The one door from `thm3/` into the GPU stage (`gpu/`, installed as `thm3.gpu`).

Every use of the GPU stage in thm3 goes through `gpu()`, which imports `thm3.gpu.api` on
first use.  The import is lazy so that thm3 imports, analyses and runs its CPU backends
where the GPU stage's needs are missing (CuPy, a device); nothing else in `thm3/` names
`thm3.gpu`.  What `thm3.gpu.api` offers: `emit`, `emit_attention`, `module_for`,
`run_cupy`, `scan_cupy`, `reduce_state_cupy`, `attention`, `nvrtc` (see its docstring)."""
from __future__ import annotations


def gpu():
    """The GPU stage's API, `thm3.gpu.api`, imported on first use.  Rendering and emitting
    need no CuPy; its run functions import CuPy when called and raise
    `thm3.errors.BackendUnavailable`, naming the extra, without it."""
    from thm3.gpu import api
    return api
