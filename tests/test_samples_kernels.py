"""Every homomorphic sample through the kernel stage: its CUDA compiles with NVRTC
for sm_90 and sm_80, and the NumPy backend (the kernel's order of operations on the
CPU) agrees with the sequential fold at n = 0, 1, a size that is not a multiple of
the block, and 10**6."""
from __future__ import annotations

import numpy as np
import pytest

from analyzed import analysis
from catalog import HOMOMORPHISMS
from thm3.ir import Type
from thm3.backends.numpy_tree import apply_result, run_parallel, run_sequential
from thm3.semantics.samples import random_arrays


def _dim(a):
    uses_vec = any(x.type is Type.VEC for x in a.loop.fields + a.loop.elements + a.loop.params)
    return 4 if uses_vec else None


@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_sample_kernel_compiles(sample):
    nvrtc = pytest.importorskip("thm3.gpu.runtime.nvrtc")
    if not nvrtc.available():
        pytest.skip("NVRTC (cuda-bindings + nvidia-cuda-nvrtc-cu12) is not installed")
    from thm3.gpu.render.cuda import render
    a = analysis(str(sample.path))
    for dtype in ("float32", "float64"):
        src = render(a.loop, a.combine_fn, dtype=dtype, dim=_dim(a))
        for arch in ("sm_90", "sm_80"):
            assert nvrtc.compile_cuda(src, arch=arch, name=f"{sample.name}.cu")


def _close(x, y):
    xs = x if isinstance(x, tuple) else (x,)
    ys = y if isinstance(y, tuple) else (y,)
    for u, v in zip(xs, ys, strict=True):
        u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
        assert u.shape == v.shape
        same = (u == v) | (np.isnan(u) & np.isnan(v))
        with np.errstate(invalid="ignore"):     # inf - inf where both are the same inf
            rel = np.abs(u - v) / np.maximum(1.0, np.abs(v))
        assert np.all(same | (np.isfinite(u) & np.isfinite(v) & (rel < 1e-8))), (u, v)


@pytest.mark.parametrize("n", [0, 1, 1000 + 7, pytest.param(10**6, marks=pytest.mark.slow)])
@pytest.mark.parametrize("sample", HOMOMORPHISMS, ids=lambda s: s.name)
def test_numpy_backend_equals_sequential_fold(sample, n):
    a = analysis(str(sample.path))
    rng = np.random.default_rng(n + len(sample.name))
    dim = _dim(a) or 4
    # Loops such as Horner's with |t| > 1 overflow on long lists, where the two orders
    # round inf - inf differently; those inputs are redrawn (with other parameters).
    for _ in range(8):
        arrays, params = random_arrays(a.loop, n, dim, rng)
        seq_state = run_sequential(a.loop, arrays, params)
        if all(np.all(np.isfinite(np.asarray(v, dtype=np.float64))) for v in seq_state):
            break
    par = apply_result(a.loop, run_parallel(a.loop, a.combine_fn, arrays, params), params)
    seq = apply_result(a.loop, seq_state, params)
    _close(par, seq)
