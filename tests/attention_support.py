"""What the FlashAttention tests share: the combine thm3 derives (no hand-written one), the
NumPy twin run with it, float64 references, inputs, and the NVRTC helper."""
from __future__ import annotations

import functools
import math
import os
import zlib
from pathlib import Path

import numpy as np
import pytest

from thm3.gpu.runtime import attention as fa

FLASH = Path(__file__).resolve().parents[1] / "samples" / "flash_attention.py"


@functools.cache
def derived():
    """(merge source, NumPy combine) of the combine thm3 derives from
    samples/flash_attention.py: what the kernels and the NumPy twin run.  No hand-written
    combine stands in for it."""
    carried = os.environ.get("THM3_DERIVED_ATTENTION")
    if carried:     # the device run: emitted here by bench/prepare_gpu.py, no z3 there
        namespace = {}
        exec((Path(carried) / "attention_combine.py").read_text(), namespace)   # thm3's output
        return (Path(carried) / "attention_merge.cu").read_text(), namespace["combine_numpy"]
    from analyzed import analysis
    from thm3.analysis.attention import recognize
    from thm3.gpu.render.attention import merge_source
    from thm3.gpu.render.module import numpy_combine_source
    a = analysis(str(FLASH))
    assert a.verdict == "homomorphism", a.reason
    shape = recognize(a.loop, a.transport_map)
    assert shape is not None
    namespace = {"np": np}
    exec(numpy_combine_source(a.loop, a.combine_fn, shape), namespace)     # thm3's own output
    return merge_source(a.loop, a.combine_fn, shape), namespace["combine_numpy"]


def merge_src() -> str:
    return derived()[0]


def twin(*args, **kwargs):
    """fa.attention_numpy with the derived combine."""
    kwargs.setdefault("combine", derived()[1])
    return fa.attention_numpy(*args, **kwargs)


# --------------------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------------------

def naive(q, k, v, causal=False, scale=None):
    """softmax(scale q K^T) V and its logsumexp in float64; empty rows give 0 and -inf."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    n_q, n_kv = q.shape[2], k.shape[2]
    s = scale * (q @ np.swapaxes(k, -1, -2))
    if causal:
        keys, rows = np.arange(n_kv)[None, :], np.arange(n_q)[:, None]
        s = np.where(keys > rows + (n_kv - n_q), -np.inf, s)
    m = s.max(axis=-1, keepdims=True) if n_kv else np.full(s.shape[:-1] + (1,), -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - np.where(np.isfinite(m), m, 0))
    d = p.sum(axis=-1, keepdims=True)
    safe = np.where(d > 0, d, 1)
    out = np.where(d > 0, (p @ v) / safe, 0)
    lse = np.where(d > 0, m + np.log(safe), -np.inf)[..., 0]
    return out, lse


# bfloat16 keeps 8 significant bits: rounding the output alone is a relative error of
# about 1.6e-3 (RMS) and P rounded for the tensor cores adds about 1.1e-3, so an exact
# bf16 kernel sits near 2e-3 against float64, and so does SDPA.  Tests bound max |error|
# over max |ref| by BF16_TOL, and on a device compare with SDPA's own error.
BF16_TOL = 5e-3


def rel_err(out, ref):
    """max |out - ref| over max |ref|."""
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    return float(np.abs(out - ref).max() / max(np.abs(ref).max(), 1e-30))


def assert_lse(lse, ref, tol):
    lse, ref = np.asarray(lse, np.float64), np.asarray(ref, np.float64)
    assert np.array_equal(np.isneginf(lse), np.isneginf(ref)), "lse -inf pattern"
    assert not np.isnan(lse).any() and not np.isposinf(lse).any()
    fin = np.isfinite(ref)
    if fin.any():
        assert np.abs(lse[fin] - ref[fin]).max() <= tol * max(1.0, np.abs(ref[fin]).max())


def seeded(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def inputs(rng, b, h, n_q, n_kv, dim, fmt="float32"):
    q = rng.standard_normal((b, h, n_q, dim)).astype(np.float32)
    k = rng.standard_normal((b, h, n_kv, dim)).astype(np.float32)
    v = rng.standard_normal((b, h, n_kv, dim)).astype(np.float32)
    return tuple(representable(x, fmt) for x in (q, k, v))


def representable(x, fmt):
    """float32 values that the format holds exactly."""
    match fmt:
        case "bfloat16":
            return fa.round_to_bfloat16(x)
        case "float16":
            return x.astype(np.float16).astype(np.float32)
        case _:
            return x




def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        pytest.skip("cuda.bindings (NVRTC) is not installed")
    return nvrtc


def nvrtc_compile(src: str, arch: str, *, ptx: bool = False, verbose: bool = False):
    """(PTX text or None, log): compute_XX gives PTX, sm_XX runs ptxas to a CUBIN."""
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), b"attention.cu", 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    opts = [f"--gpu-architecture={'compute' if ptx else 'sm'}_{arch}".encode(), b"-std=c++17"]
    if verbose:
        opts.append(b"-Xptxas=-v")
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    log = log.decode(errors="replace")
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, log
    text = None
    if ptx:
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = b" " * size
        nvrtc.nvrtcGetPTX(prog, buf)
        text = buf.decode()
    else:
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        assert size > 0
    nvrtc.nvrtcDestroyProgram(prog)
    return text, log


def ptx_entry(ptx: str, name: str) -> str:
    body = ptx[ptx.index(f".entry {name}"):]
    return body[:body.index("\n}\n")]
