"""FlashAttention from the derived combine, at run time: the kernels' configuration, a
NumPy twin, and the CuPy runner.  `gpu/render/attention.py` renders the CUDA; the emitted
attention module (`gpu/render/module.py`) carries its variants pre-rendered and this file,
with `common.py`, copied verbatim.

One query row of softmax(scale * q K^T) V is a left fold over (k, v) with state
(m, d, o); a K/V tile is a sublist whose state comes from two matrix products and a
row max, and merging it into the running state is the derived combine.  Split-K
(Flash-Decoding) folds K/V chunks in parallel and merges the partials in order with the
same combine.  `attention_numpy` runs the very same tiles, splits and merges on the CPU;
`attention_cupy` launches the rendered text.

Units.  The loop's m is in natural-log units (scores scale * q.k).  Inside a tile the
kernel works in base 2: c = scale * log2(e), t = fl(s * c) computed once, the row max
mt = max t over those same rounded values, p = exp2(t - mt) <= 1.  The tile's state in
the loop's units is (mt * ln 2, sum p, sum p v); only that conversion stands between the
tile and the combine, which is called as derived.  On the GPU it is rendered in its split
form (`thm3.analysis.attention.merge_form`): once a row per merge for (m, d) and the two
coefficients of its linear o part, which every lane of o then applies; the NumPy twin
applies it to whole states.  There is no hand-written combine: without the derived one
the functions here refuse.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .common import BackendUnavailable, _cupy, _device  # thm3: runtime import  # noqa: F401

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453

DTYPES = ("float16", "bfloat16", "float32")
DIMS = (64, 128)
MAX_SPLITS = 65535          # splits are grid.y


# --------------------------------------------------------------------------------------
# Configuration shared by the CUDA kernels and their NumPy twin
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelConfig:
    """Tile shape of one kernel variant: a block owns `block_m` queries and walks the
    K/V tiles of `block_n` keys; `num_warps` warps of 32 threads."""
    dtype: str
    dim: int
    num_warps: int
    block_m: int
    block_n: int

    @property
    def threads(self) -> int:
        return 32 * self.num_warps

    @property
    def registers(self) -> int:
        """Registers a thread, as ptxas reported them for sm_90 (no spills): an estimate
        for occupancy, used to size split-K."""
        if self.dtype == "float32":
            return 128
        return 255 if self.dim == 128 else 128

    @property
    def shared_bytes(self) -> int:
        """Dynamic shared memory of the forward kernel."""
        if self.dtype == "float32":
            # Q tile, K tile padded by one float per row (bank-conflict free column reads), V tile
            return 4 * (self.block_m * self.dim + self.block_n * (self.dim + 1)
                        + self.block_n * self.dim)
        # Q tile, and two stages (double buffering) of K and V tiles, 2 bytes an element
        return 2 * self.dim * (self.block_m + 4 * self.block_n)


def kernel_config(dtype: str, dim: int, n_q: int, num_warps: int | None = None) -> KernelConfig:
    """The variant `attention` launches.  16-bit inputs use tensor cores with 16 query rows
    a warp: 8 warps (128 queries a block, so each K/V tile read from L2 serves 128 rows)
    for n_q > 64, 4 warps for n_q <= 64, one warp for decoding (n_q <= 16), K/V tiles of 64
    keys.  float32 inputs use plain FMA with 4 rows a warp, 4 warps, tiles of 32 keys."""
    dtype = dtype_name(dtype)
    if dtype == "float32":
        warps = num_warps or 4
        return KernelConfig(dtype, dim, warps, 4 * warps, 32)
    warps = num_warps or (1 if n_q <= 16 else 4 if n_q <= 64 else 8)
    if warps not in (1, 2, 4, 8):
        raise ValueError(f"num_warps must be 1, 2, 4 or 8, not {warps}")
    return KernelConfig(dtype, dim, warps, 16 * warps, 64)


def variant_name(dtype: str, dim: int, causal: bool, num_warps: int) -> str:
    """A file-name-safe name of one kernel variant, e.g. attention-bfloat16-d128-causal-w4."""
    return (f"attention-{dtype_name(dtype)}-d{dim}-{'causal' if causal else 'full'}"
            f"-w{num_warps}")


def choose_splits(q_tiles: int, batch_heads: int, kv_tiles: int, *, num_sms: int = 132,
                  blocks_per_sm: int = 2, max_splits: int = 128) -> int:
    """How many K/V chunks to fold in parallel (Flash-Decoding) so that the grid fills the
    GPU: 1 when q_tiles * batch_heads blocks already do, else as many splits as keep all
    blocks resident at once (`num_sms * blocks_per_sm`: one wave, no straggling second
    one), each split keeping at least two K/V tiles."""
    base = max(1, q_tiles * batch_heads)
    target = num_sms * blocks_per_sm
    if base >= target or kv_tiles <= 2:
        return 1
    splits = min(target // base, kv_tiles // 2, max_splits)
    return normalize_splits(kv_tiles, max(1, splits))


def normalize_splits(kv_tiles: int, splits: int) -> int:
    """The number of non-empty chunks when `kv_tiles` tiles are cut into `splits`
    contiguous chunks of ceil(kv_tiles / splits) tiles each."""
    if kv_tiles <= 0:
        return 1
    per = -(-kv_tiles // max(1, splits))
    return -(-kv_tiles // per)


def tiles_per_split(kv_tiles: int, splits: int) -> int:
    return max(1, -(-kv_tiles // max(1, splits)))


def key_tile_range(split: int, per_split: int, kv_tiles: int) -> range:
    """Split `split` owns the contiguous K/V tiles [split * per_split, ...)."""
    begin = split * per_split
    return range(begin, max(begin, min(begin + per_split, kv_tiles)))


# --------------------------------------------------------------------------------------
# The derived combine on NumPy rows
# --------------------------------------------------------------------------------------

def rowwise(combine):
    """A combine over whole arrays of rows from one over a single row (m and d numbers,
    o a vector), such as `thm3.analyze(...).combine`: applied row by row, in place order."""
    def batched(a, b):
        (m1, d1, o1), (m2, d2, o2) = tuple(a), tuple(b)
        m, d, o = np.empty_like(m1), np.empty_like(d1), np.empty_like(o1)
        for row in np.ndindex(m1.shape[:-1]):
            r = tuple(combine((m1[row][0], d1[row][0], o1[row]), (m2[row][0], d2[row][0], o2[row])))
            m[row], d[row], o[row] = r[0], r[1], r[2]
        return m, d, o
    return batched


# --------------------------------------------------------------------------------------
# NumPy: the same tiles, splits and merges on the CPU
# --------------------------------------------------------------------------------------

def dtype_name(dtype) -> str:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).replace("torch.", "")
    match name:
        case "float16" | "half":
            return "float16"
        case "bfloat16":
            return "bfloat16"
        case "float32" | "float":
            return "float32"
        case "float64" | "double":
            return "float64"
        case _:
            raise TypeError(f"attention takes float16, bfloat16 or float32 arrays, not {name}")


def round_to_bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 -> nearest bfloat16 (ties to even), returned as float32; NaN stays NaN."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    rounded = np.where(np.isnan(x), np.uint32(0x7FC00000), rounded)
    return rounded.astype(np.uint32).view(np.float32)


def _round_p(p: np.ndarray, dtype: str) -> np.ndarray:
    # The tensor-core path feeds P to the second product in the input's 16-bit format.
    match dtype:
        case "float16":
            return p.astype(np.float16).astype(p.dtype)
        case "bfloat16":
            return round_to_bfloat16(p)
        case _:
            return p


def _as_state(s, dtype):
    m, d, o = tuple(s)
    return (np.asarray(m, dtype=dtype), np.asarray(d, dtype=dtype), np.asarray(o, dtype=dtype))


def attention_numpy(q, k, v, causal: bool = False, scale: float | None = None,
                    splits: int | None = None, *, combine=None, input_dtype: str | None = None,
                    num_sms: int = 132):
    """(out, lse) for (batch, heads, n, D) arrays by the kernels' algorithm on the CPU.

    The K/V sequence is cut into the kernels' tiles (64 keys for 16-bit inputs, 32 for
    float32) and `splits` contiguous chunks of tiles (None: what the kernel would pick on
    an H200).  Each chunk folds its tiles: per tile t = fl(s c), mt = max t, p =
    exp2(t - mt), tile state (mt ln2, sum p, p @ v) (p rounded to the 16-bit input format
    before the product, as the tensor cores see it), merged into the running state with
    `combine`; then the partials are merged in order with the same combine.  `combine` is
    a callable combine(a, b) -> (m, d, o) on NumPy arrays, m and d shaped (..., 1): the
    derived one (`rowwise(analysis.combine)` for one that takes a row at a time, or an
    emitted module's `combine_numpy`); there is no default.  All queries of a row block are independent, so
    they are folded together rather than in query tiles.

    Inputs are NumPy arrays of float16, float32, float64 or ml_dtypes' bfloat16;
    `input_dtype="bfloat16"` treats float32 arrays as holding bfloat16 values (NumPy has
    no bfloat16 of its own).  For 16-bit inputs the output is rounded to that format, as
    the kernel stores it, and given in q's dtype; lse is float32 (float64 for float64)."""
    if combine is None:
        raise TypeError("attention_numpy needs the derived combine (combine=...): thm3 keeps no "
                        "hand-written one")
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    dtype = dtype_name(input_dtype or q.dtype)
    _check_shapes(q, k, v)
    state_dtype = np.float64 if dtype == "float64" else np.float32
    b, h, n_q, dim = q.shape
    n_kv = k.shape[2]
    scale = 1.0 / math.sqrt(dim) if scale is None else float(scale)
    c = state_dtype(scale * LOG2E)
    ln2 = state_dtype(LN2)
    cfg = kernel_config("float32" if dtype == "float64" else dtype, dim, n_q)
    kv_tiles = -(-n_kv // cfg.block_n)
    q_tiles = -(-n_q // cfg.block_m)
    if splits is None:
        splits = choose_splits(q_tiles, b * h, kv_tiles, num_sms=num_sms,
                               blocks_per_sm=_blocks_per_sm(cfg))
    splits = normalize_splits(kv_tiles, int(splits))
    per_split = tiles_per_split(kv_tiles, splits)

    qf = q.astype(state_dtype)
    kf = k.astype(state_dtype)
    vf = v.astype(state_dtype)
    rows = np.arange(n_q)[:, None]
    identity = (np.full((b, h, n_q, 1), -np.inf, state_dtype),
                np.zeros((b, h, n_q, 1), state_dtype),
                np.zeros((b, h, n_q, dim), state_dtype))

    partials = []
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for split in range(splits):
            state = identity
            for tile in key_tile_range(split, per_split, kv_tiles):
                lo, hi = tile * cfg.block_n, min((tile + 1) * cfg.block_n, n_kv)
                s = qf @ np.swapaxes(kf[:, :, lo:hi], -1, -2)
                t = (s * c).astype(state_dtype)
                if causal:
                    keys = np.arange(lo, hi)[None, :]
                    t = np.where(keys > rows + (n_kv - n_q), -np.inf, t).astype(state_dtype)
                mt = t.max(axis=-1, keepdims=True)
                p = np.exp2(t - np.where(mt == -np.inf, 0, mt)).astype(state_dtype)
                tile_state = ((mt * ln2).astype(state_dtype), p.sum(axis=-1, keepdims=True),
                              _round_p(p, dtype) @ vf[:, :, lo:hi])
                state = _as_state(combine(state, tile_state), state_dtype)
            partials.append(state)
        total = partials[0]
        if splits > 1:
            total = identity
            for part in partials:
                total = _as_state(combine(total, part), state_dtype)
        m, d, o = total
        # one reciprocal a row, as the kernels: out = o * (1 / d)
        inverse = np.where(d > 0, (1 / np.where(d > 0, d, 1)).astype(state_dtype), 0).astype(state_dtype)
        out = (o * inverse).astype(state_dtype)
        lse = np.where(d > 0, m + np.log(np.where(d > 0, d, 1)), -np.inf)[..., 0]
    out = _round_p(out, dtype)          # the 16-bit store, exact in float32
    out_dtype = q.dtype if dtype in ("float16", "bfloat16") else state_dtype
    return out.astype(out_dtype), lse.astype(state_dtype)


def _check_shapes(q, k, v):
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("attention takes (batch, heads, n, D) arrays")
    if k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"shapes do not match: q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)}")


def _blocks_per_sm(cfg: KernelConfig, shared_per_sm: int = 227 * 1024,
                   registers_per_sm: int = 65536) -> int:
    """Resident blocks a multiprocessor holds, by shared memory and registers (Hopper)."""
    by_registers = registers_per_sm // (cfg.threads * cfg.registers)
    return max(1, min(4, shared_per_sm // max(1, cfg.shared_bytes), by_registers))


# --------------------------------------------------------------------------------------
# CuPy runner
# --------------------------------------------------------------------------------------


_KERNELS: dict[tuple[int, str], tuple] = {}


def _kernels(source: str, shared_bytes: int):
    """(forward, merge) of a source, compiled once per device; keyed by the text itself
    (a str caches its hash, so a caller that keeps its source pays nothing to look up)."""
    cupy = _cupy()

    key = (_device(cupy), source)
    got = _KERNELS.get(key)
    if got is None:
        module = cupy.RawModule(code=source, options=("-std=c++17",))
        forward = module.get_function("thm3_attention_fwd")
        if shared_bytes > 48 * 1024:
            forward.max_dynamic_shared_size_bytes = shared_bytes
        got = (module, forward, module.get_function("thm3_attention_merge"))
        _KERNELS[key] = got
    return got[1], got[2]


@functools.lru_cache(maxsize=16)
def _num_sms(device: int) -> int:
    cupy = _cupy()
    return cupy.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"]


class _Frame:
    """Where the arrays live: CuPy arrays, or torch tensors (needed for bfloat16, which
    CuPy has no dtype for).  Outputs are made by the same library as the inputs."""

    def __init__(self, like):
        self.torch = type(like).__module__.split(".")[0] == "torch"
        if self.torch:
            import torch
            self.lib = torch
        else:
            cupy = _cupy()
            self.lib = cupy

    def dtype_name(self, x) -> str:
        return dtype_name(str(x.dtype))

    def contiguous(self, x):
        return x.contiguous() if self.torch else self.lib.ascontiguousarray(x)

    def empty(self, shape, dtype: str, like=None):
        if self.torch:
            return self.lib.empty(shape, dtype=getattr(self.lib, dtype), device=like.device)
        return self.lib.empty(shape, dtype=dtype)

    def full(self, shape, value, dtype: str, like=None):
        if self.torch:
            return self.lib.full(shape, value, dtype=getattr(self.lib, dtype), device=like.device)
        return self.lib.full(shape, value, dtype=dtype)

    def aligned(self, x):
        """x, or a copy of it at a fresh (256-byte aligned) allocation when x starts off a
        16-byte boundary, as a view with an odd storage offset can."""
        if int(self.ptr(x)) % 16 == 0:
            return x
        return x.clone() if self.torch else x.copy()

    def ptr(self, x) -> np.uint64:
        return np.uint64(x.data_ptr() if self.torch else x.data.ptr)

    def stream(self):
        cupy = _cupy()
        if self.torch:
            return cupy.cuda.ExternalStream(self.lib.cuda.current_stream().cuda_stream)
        return cupy.cuda.get_current_stream()


def attention_cupy(q, k, v, *, causal: bool = False, scale: float | None = None,
                   splits: int | None = None, sources=None, source: str | None = None,
                   num_warps: int | None = None):
    """(out, lse) on the GPU.  q, k, v: CuPy arrays (float16, float32) or CUDA torch
    tensors (also bfloat16), (batch, heads, n, D) with D in {64, 128}; out has q's dtype,
    lse is float32.  `source` is a pre-rendered variant (its shape must be the one
    `kernel_config` picks, or `num_warps`); otherwise `sources(dtype, causal, num_warps)`
    gives the variant's text, rendered with the derived combine's merge (one of the two is
    required).  Inputs off 16-byte alignment (cp.async reads 16 bytes at a time) are
    copied to fresh, aligned arrays first."""
    if source is None and sources is None:
        raise TypeError("attention_cupy needs the derived combine (sources=... rendered with its "
                        "merge) or a rendered source: thm3 keeps no hand-written one")
    frame = _Frame(q)
    q, k, v = (frame.aligned(frame.contiguous(x)) for x in (q, k, v))
    _check_shapes(q, k, v)
    dtype = frame.dtype_name(q)
    if dtype == "float64" or frame.dtype_name(k) != dtype or frame.dtype_name(v) != dtype:
        raise TypeError("q, k and v must share one dtype of float16, bfloat16, float32")
    b, h, n_q, dim = (int(x) for x in q.shape)
    n_kv = int(k.shape[2])
    if dim not in DIMS:
        raise ValueError(f"head dimension must be one of {DIMS}, not {dim}")
    if b * h > 65535:
        raise ValueError("batch * heads must be at most 65535 (grid z)")
    if max(n_q, n_kv) >= 2**31:
        raise ValueError(f"sequence lengths must be below 2**31, not {max(n_q, n_kv)}")
    out = frame.empty((b, h, n_q, dim), dtype, like=q)
    lse = frame.empty((b, h, n_q), "float32", like=q)
    if n_q == 0 or b * h == 0:
        return out, lse
    cfg = kernel_config(dtype, dim, n_q, num_warps)
    scale = 1.0 / math.sqrt(dim) if scale is None else float(scale)
    kv_tiles = -(-n_kv // cfg.block_n)
    q_tiles = -(-n_q // cfg.block_m)
    if splits is None:
        cupy = _cupy()
        splits = choose_splits(q_tiles, b * h, kv_tiles,
                               num_sms=_num_sms(_device(cupy)),
                               blocks_per_sm=_blocks_per_sm(cfg))
    splits = normalize_splits(kv_tiles, min(int(splits), MAX_SPLITS))
    per_split = tiles_per_split(kv_tiles, splits)

    if source is None:
        source = sources(dtype, bool(causal), cfg.num_warps)
    fwd, merge = _kernels(source, cfg.shared_bytes)
    rows = b * h * n_q
    null = np.uint64(0)
    if splits > 1:
        part_o = frame.empty((splits * rows * dim,), "float32", like=q)
        part_m = frame.empty((splits * rows,), "float32", like=q)
        part_d = frame.empty((splits * rows,), "float32", like=q)
        parts = (frame.ptr(part_o), frame.ptr(part_m), frame.ptr(part_d))
    else:
        parts = (null, null, null)
    stream = frame.stream()
    with stream:
        fwd((q_tiles, splits, b * h), (cfg.threads,),
            (frame.ptr(q), frame.ptr(k), frame.ptr(v), frame.ptr(out), frame.ptr(lse), *parts,
             np.int32(n_q), np.int32(n_kv), np.int32(per_split), np.float32(scale * LOG2E)),
            shared_mem=cfg.shared_bytes)
        if splits > 1:
            merge((-(-rows // 4),), (128,),
                  (*parts, frame.ptr(out), frame.ptr(lse), np.int64(rows), np.int32(splits)))
    return out, lse


def attention(q, k, v, *, causal: bool = False, scale: float | None = None,
              splits: int | None = None, backend: str = "cupy", combine=None, sources=None):
    """softmax(scale q K^T) V and its natural-log logsumexp per query row, over
    (batch, heads, n, D) arrays; n_q may differ from n_kv, and causal aligns the last
    query with the last key (query i sees keys j <= i + n_kv - n_q).  A row that sees no
    key gives out 0 and lse -inf.  backend "cupy" runs the rendered kernels (`sources`
    gives them, rendered with the derived combine's merge), "numpy" the same algorithm on
    the CPU (`combine` the derived combine as a Python callable)."""
    match backend:
        case "numpy":
            return attention_numpy(q, k, v, causal, scale, splits, combine=combine)
        case "cupy":
            return attention_cupy(q, k, v, causal=causal, scale=scale, splits=splits,
                                  sources=sources)
        case _:
            raise ValueError(f"backend must be 'numpy' or 'cupy', not {backend!r}")


__all__ = ["attention", "attention_numpy", "attention_cupy", "BackendUnavailable",
           "kernel_config", "KernelConfig", "choose_splits", "variant_name", "dtype_name",
           "normalize_splits", "tiles_per_split", "key_tile_range",
           "rowwise", "round_to_bfloat16", "LOG2E", "LN2", "MAX_SPLITS", "DTYPES", "DIMS"]
