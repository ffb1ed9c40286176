"""FlashAttention from the derived combine: rendering, a NumPy twin, and the CuPy runner.

One query row of softmax(scale * q K^T) V is a left fold over (k, v) with state
(m, d, o); a K/V tile is a sublist whose state comes from two matrix products and a
row max, and merging it into the running state is the derived combine.  Split-K
(Flash-Decoding) folds K/V chunks in parallel and merges the partials in order with the
same combine.  `render_attention` is pure text; `attention_numpy` runs the very same
tiles, splits and merges on the CPU; `attention_cupy` compiles and launches the text.

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
from string import Template

import numpy as np

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
    dtype = _dtype_name(dtype)
    if dtype == "float32":
        warps = num_warps or 4
        return KernelConfig(dtype, dim, warps, 4 * warps, 32)
    warps = num_warps or (1 if n_q <= 16 else 4 if n_q <= 64 else 8)
    if warps not in (1, 2, 4, 8):
        raise ValueError(f"num_warps must be 1, 2, 4 or 8, not {warps}")
    return KernelConfig(dtype, dim, warps, 16 * warps, 64)


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

def _dtype_name(dtype) -> str:
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
    dtype = _dtype_name(input_dtype or q.dtype)
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
# CUDA text: one template with named holes
# --------------------------------------------------------------------------------------

_ELEM = {"float16": "f16", "bfloat16": "bf16"}

# The device primitives as inline PTX.  NVRTC here has no CUDA headers, so 16-bit values
# are raw `unsigned short` bits and pairs of them `unsigned int`, converted with `cvt`.
_PTX_PRIMITIVES = Template(r"""
__device__ __forceinline__ unsigned thm3_smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}
// 16 bytes global -> shared, asynchronously; src_bytes == 0 writes zeros and reads nothing
__device__ __forceinline__ void thm3_cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void thm3_cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void thm3_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}
// Four 8x8 matrices of 16-bit values; lanes 8i..8i+7 give the row addresses of matrix i,
// and lane l receives in r_i row l/4, columns 2(l%4) and 2(l%4)+1 (lower column in the low
// half).  With .trans lane l receives rows 2(l%4), 2(l%4)+1 of column l/4 instead.
__device__ __forceinline__ void thm3_ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1,
                                                 unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void thm3_ldmatrix_x4_trans(unsigned addr, unsigned& r0, unsigned& r1,
                                                       unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
// D = A B + D for A 16x16 (row), B 16x8 (col), D 16x8 float.  Lane l, g = l/4, t = l%4:
//   a[0] = A[g][2t..2t+1]   a[1] = A[g+8][2t..2t+1]   a[2] = A[g][2t+8..]   a[3] = A[g+8][2t+8..]
//   b0   = B[2t..2t+1][g]   b1   = B[2t+8..2t+9][g]
//   c[0], c[1] = D[g][2t], D[g][2t+1]                 c[2], c[3] = D[g+8][2t], D[g+8][2t+1]
__device__ __forceinline__ void thm3_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.${elem}.${elem}.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// two floats -> two ${elem} in one register, `lo` in the low half (cvt puts its first
// source operand in the upper half)
__device__ __forceinline__ unsigned thm3_pack2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.${elem}x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned short thm3_to_elem(float x) {
    unsigned short r;
    asm("cvt.rn.${elem}.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}
""")


_PTX_EXP2 = r"""
// 2^x by the special-function unit alone (results below 2^-126 flush to 0, which a
// softmax weight can afford); exp2f would add the subnormal fix-up around it
__device__ __forceinline__ float thm3_exp2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}
"""


def ptx_primitives(dtype: str) -> str:
    """The device-primitives hole as inline PTX: `thm3_exp2` for every dtype, and the
    cp.async / ldmatrix / mma / cvt wrappers for the 16-bit ones."""
    dtype = _dtype_name(dtype)
    tensor = _PTX_PRIMITIVES.substitute(elem=_ELEM[dtype]) if dtype in _ELEM else ""
    return _PTX_EXP2 + tensor


_SOURCE = Template(r"""// thm3 FlashAttention forward: ${variant}.
// Rendered by gpu/attention.py from the derived combine; one query row is a left fold over
// (k, v) with state (m, d, o), a K/V tile is a sublist, and thm3_merge_rows merges states.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

// ---- the derived combine, in the split form the kernel merges in ------------------------
// m from the two m's; d linear in the two d's and o = o_a * alpha_a + o_b * alpha_b, the
// coefficients reading the m's alone (thm3.analysis.attention.merge_form checks this on the
// combine's terms).  So a lane may carry a partial d, each row's merge is rendered once with
// its common exps shared, and every lane of o costs one multiply and one FMA.
struct thm3_merge { float m, d, alpha_a, alpha_b; };
${merge}

__host__ __device__ inline float thm3_merge_lane(const thm3_merge& c, float a_o, float b_o) {
    return fmaf(b_o, c.alpha_b, a_o * c.alpha_a);
}

// ---- device primitives -----------------------------------------------------------------
${primitives}

// ---- shapes ----------------------------------------------------------------------------
#define THM3_DIM ${dim}
#define THM3_WARPS ${num_warps}
#define THM3_THREADS (32 * THM3_WARPS)
#define THM3_BLOCK_M ${block_m}
#define THM3_BLOCK_N ${block_n}
#define THM3_CAUSAL ${causal}
#define THM3_LN2 0.693147180559945309f

typedef ${elem_c} thm3_elem;    // one ${dtype} input/output element (raw bits when 16-bit)

extern __shared__ __align__(128) unsigned char thm3_smem[];

// K/V tiles [begin, end) that a block folds: its split's contiguous chunk, cut where the
// block's last query row stops seeing keys (causal: query i sees keys j <= i + n_kv - n_q).
struct thm3_range { int begin, end; };
__device__ __forceinline__ thm3_range thm3_key_tiles(int q0, int n_q, int n_kv, int split,
                                                     int tiles_per_split) {
    const int total = (n_kv + THM3_BLOCK_N - 1) / THM3_BLOCK_N;
    thm3_range r;
    r.begin = split * tiles_per_split;
    r.end = min(r.begin + tiles_per_split, total);
#if THM3_CAUSAL
    const int limit = min(q0 + THM3_BLOCK_M, n_q) + (n_kv - n_q);   // keys < limit can be seen
    r.end = min(r.end, limit <= 0 ? 0 : (limit + THM3_BLOCK_N - 1) / THM3_BLOCK_N);
#endif
    if (r.end < r.begin) r.end = r.begin;
    return r;
}

__device__ __forceinline__ bool thm3_masked(int row, int key, int n_q, int n_kv) {
#if THM3_CAUSAL
    return key >= n_kv || key > row + (n_kv - n_q);
#else
    return key >= n_kv;
#endif
}

__device__ __forceinline__ void thm3_store(thm3_elem* p, float x) { ${store_elem} }

// out = o * (1 / d), one reciprocal a row, and lse = m + log d (natural log); an empty row
// gives 0 and -inf, never NaN.
__device__ __forceinline__ float thm3_lse(float m, float d) {
    return d > 0.0f ? m + logf(d) : -INFINITY;
}
__device__ __forceinline__ float thm3_inverse(float d) {
    return d > 0.0f ? __frcp_rn(d) : 0.0f;
}

${forward}

// ---- second pass of split-K: merge the partial states of each row in split order -------
// One warp a row; lane l owns the columns l, l + 32, ...  Partials: o[split][row][DIM],
// m[split][row], d[split][row], rows = batch * heads * n_q.
extern "C" __global__ void __launch_bounds__(128)
thm3_attention_merge(const float* __restrict__ part_o, const float* __restrict__ part_m,
                     const float* __restrict__ part_d, thm3_elem* __restrict__ out,
                     float* __restrict__ lse, long long rows, int num_splits) {
    // rows = batch * heads * n_q may pass 2^31: row and offsets in 64 bits
    const long long row = blockIdx.x * 4LL + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    float m = -INFINITY, d = 0.0f, o[THM3_DIM / 32];
#pragma unroll
    for (int i = 0; i < THM3_DIM / 32; ++i) o[i] = 0.0f;
    for (int s = 0; s < num_splits; ++s) {
        const size_t at = (size_t)s * rows + row;
        const thm3_merge c = thm3_merge_rows(m, d, part_m[at], part_d[at]);
#pragma unroll
        for (int i = 0; i < THM3_DIM / 32; ++i)
            o[i] = thm3_merge_lane(c, o[i], part_o[at * THM3_DIM + lane + 32 * i]);
        m = c.m;
        d = c.d;
    }
    const float inverse = thm3_inverse(d);
#pragma unroll
    for (int i = 0; i < THM3_DIM / 32; ++i)
        thm3_store(out + (size_t)row * THM3_DIM + lane + 32 * i, o[i] * inverse);
    if (lane == 0) lse[row] = thm3_lse(m, d);
}
""")


_FORWARD_16 = r"""
// ---- forward, tensor cores (mma.sync m16n8k16, fp32 accumulate) -------------------------
// A block of THM3_WARPS warps owns THM3_BLOCK_M = 16 * THM3_WARPS queries, warp w the rows
// 16w..16w+15, and walks its K/V tiles of THM3_BLOCK_N keys, double-buffered in shared
// memory by cp.async.  Per tile, each warp: S = Q K^T (Q kept in registers as A fragments,
// K by ldmatrix as B fragments), t = fl(S c), mt = row max of t, p = exp2(t - mt), the
// tile state (mt ln2, sum p, P V) with P kept in registers as the A operand of the second
// product, then the combine with the running state.
#define THM3_CHUNKS (THM3_DIM / 8)                      // 16-byte chunks a row
#define THM3_TILE_BYTES(rows) ((rows) * THM3_DIM * 2)
static_assert(THM3_CHUNKS >= 8, "the swizzle permutes 8 chunks within a row");
static_assert(THM3_BLOCK_M == 16 * THM3_WARPS, "a warp owns 16 query rows");
static_assert(THM3_BLOCK_N % 16 == 0, "tiles of whole mma steps");
static_assert((THM3_BLOCK_M * THM3_CHUNKS) % THM3_THREADS == 0, "Q tile loads divide evenly");
static_assert((THM3_BLOCK_N * THM3_CHUNKS) % THM3_THREADS == 0, "K/V tile loads divide evenly");

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile: the chunk index is XORed
// with row % 8, so the 8 rows that one ldmatrix phase reads hit 8 different bank groups.
__device__ __forceinline__ unsigned thm3_tile_offset(int row, int chunk) {
    return (unsigned)(row * (THM3_DIM * 2) + ((chunk ^ (row & 7)) << 4));
}

// Rows [row0, row0 + ROWS) of an (n, DIM) matrix into a tile; rows >= n become zeros.
// (With few warps a thread issues many copies a tile; unrolled, their addresses would be
// hoisted out of the tile loop into registers and spill, so that loop stays rolled.)
template <int ROWS>
__device__ __forceinline__ void thm3_load_tile(unsigned tile, const thm3_elem* base, int row0, int n) {
${load_unroll}
    for (int it = 0; it < ROWS * THM3_CHUNKS / THM3_THREADS; ++it) {
        const int i = threadIdx.x + it * THM3_THREADS;
        const int row = i / THM3_CHUNKS, chunk = i % THM3_CHUNKS;
        const bool inside = row0 + row < n;
        const thm3_elem* src = base + (size_t)(inside ? row0 + row : 0) * THM3_DIM + chunk * 8;
        thm3_cp_async16(tile + thm3_tile_offset(row, chunk), src, inside ? 16u : 0u);
    }
}

extern "C" __global__ void __launch_bounds__(${launch_bounds})
thm3_attention_fwd(const thm3_elem* __restrict__ q, const thm3_elem* __restrict__ k,
                   const thm3_elem* __restrict__ v, thm3_elem* __restrict__ out,
                   float* __restrict__ lse, float* __restrict__ part_o,
                   float* __restrict__ part_m, float* __restrict__ part_d,
                   int n_q, int n_kv, int tiles_per_split, float scale_log2) {
    // causal blocks with the most tiles start first
    const int q_tile = THM3_CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int split = blockIdx.y, num_splits = gridDim.y;
    const int bh = blockIdx.z, batch_heads = gridDim.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t4 = lane & 3;             // mma groupID, thread in group
    const int q0 = q_tile * THM3_BLOCK_M;
    const int row_a = q0 + warp * 16 + g, row_b = row_a + 8;   // this lane's two query rows

    const thm3_elem* qb = q + (size_t)bh * n_q * THM3_DIM;
    const thm3_elem* kb = k + (size_t)bh * n_kv * THM3_DIM;
    const thm3_elem* vb = v + (size_t)bh * n_kv * THM3_DIM;

    const unsigned s_q = thm3_smem_addr(thm3_smem);
    const unsigned s_k = s_q + THM3_TILE_BYTES(THM3_BLOCK_M);
    const unsigned s_v = s_k + 2 * THM3_TILE_BYTES(THM3_BLOCK_N);

    // Running state of rows row_a (index 0) and row_b (index 1).  o is in the C-fragment
    // layout with DIM as the n axis: o[j][0..1] row_a, columns 8j + 2 t4 + {0, 1};
    // o[j][2..3] the same for row_b.  d is this lane's share of the row sum (its own
    // columns): the combine is linear in d once m is shared by the row, so the four
    // lanes of a row add their shares at the end.
    float o[THM3_DIM / 8][4];
#pragma unroll
    for (int j = 0; j < THM3_DIM / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
    float m_run[2] = {-INFINITY, -INFINITY}, d_run[2] = {0.0f, 0.0f};

    const thm3_range tiles = thm3_key_tiles(q0, n_q, n_kv, split, tiles_per_split);
    unsigned qf[THM3_DIM / 16][4];                      // Q as A fragments, one per k-step
    if (tiles.begin < tiles.end) {
        thm3_load_tile<THM3_BLOCK_M>(s_q, qb, q0, n_q);
        thm3_load_tile<THM3_BLOCK_N>(s_k, kb, tiles.begin * THM3_BLOCK_N, n_kv);
        thm3_load_tile<THM3_BLOCK_N>(s_v, vb, tiles.begin * THM3_BLOCK_N, n_kv);
        thm3_cp_async_commit();
        thm3_cp_async_wait<0>();
        __syncthreads();
        // lanes 0-15 address rows 0-15 of columns 16kk..16kk+7 (matrices 0, 1 = a[0], a[1]),
        // lanes 16-31 the same rows at columns 16kk+8.. (matrices 2, 3 = a[2], a[3])
#pragma unroll
        for (int kk = 0; kk < THM3_DIM / 16; ++kk)
            thm3_ldmatrix_x4(s_q + thm3_tile_offset(warp * 16 + (lane & 15), 2 * kk + (lane >> 4)),
                             qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3]);
    }

    for (int tile = tiles.begin; tile < tiles.end; ++tile) {
        const int stage = (tile - tiles.begin) & 1;
        if (tile + 1 < tiles.end) {                     // prefetch the next tile
            thm3_load_tile<THM3_BLOCK_N>(s_k + (stage ^ 1) * THM3_TILE_BYTES(THM3_BLOCK_N), kb,
                                         (tile + 1) * THM3_BLOCK_N, n_kv);
            thm3_load_tile<THM3_BLOCK_N>(s_v + (stage ^ 1) * THM3_TILE_BYTES(THM3_BLOCK_N), vb,
                                         (tile + 1) * THM3_BLOCK_N, n_kv);
            thm3_cp_async_commit();
            thm3_cp_async_wait<1>();
        } else {
            thm3_cp_async_wait<0>();
        }
        __syncthreads();
        const unsigned s_kt = s_k + stage * THM3_TILE_BYTES(THM3_BLOCK_N);
        const unsigned s_vt = s_v + stage * THM3_TILE_BYTES(THM3_BLOCK_N);

        // S = Q K^T: s[j] is the C fragment of keys 8j..8j+7 of the tile.  B[kd][n] =
        // K[n][kd] is K read row by row: ldmatrix (no .trans) of keys 16jj + (0..7 | 8..15)
        // at columns 16kk + (0..7 | 8..15) gives b0, b1 of keys 16jj.. and of keys 16jj+8..
        float s[THM3_BLOCK_N / 8][4];
#pragma unroll
        for (int j = 0; j < THM3_BLOCK_N / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < THM3_DIM / 16; ++kk) {
#pragma unroll
            for (int jj = 0; jj < THM3_BLOCK_N / 16; ++jj) {
                const int mat = lane >> 3;
                const int key = 16 * jj + (lane & 7) + ((mat >> 1) << 3);
                unsigned b0, b1, b2, b3;
                thm3_ldmatrix_x4(s_kt + thm3_tile_offset(key, 2 * kk + (mat & 1)), b0, b1, b2, b3);
                thm3_mma(s[2 * jj], qf[kk], b0, b1);
                thm3_mma(s[2 * jj + 1], qf[kk], b2, b3);
            }
        }

        // t = fl(s c) once (never contracted into an FMA with the later subtraction), the
        // masked scores -inf; the max is over exactly the values that are subtracted.
        const int key0 = tile * THM3_BLOCK_N;
        const bool edge = key0 + THM3_BLOCK_N > n_kv
                          || (THM3_CAUSAL && key0 + THM3_BLOCK_N - 1 > q0 + (n_kv - n_q));
#pragma unroll
        for (int j = 0; j < THM3_BLOCK_N / 8; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float t = __fmul_rn(s[j][e], scale_log2);
                if (edge && thm3_masked(e < 2 ? row_a : row_b, key0 + 8 * j + 2 * t4 + (e & 1), n_q, n_kv))
                    t = -INFINITY;
                s[j][e] = t;
            }
        }
        float mt[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int j = 0; j < THM3_BLOCK_N / 8; ++j) {
            mt[0] = fmaxf(mt[0], fmaxf(s[j][0], s[j][1]));
            mt[1] = fmaxf(mt[1], fmaxf(s[j][2], s[j][3]));
        }
#pragma unroll
        for (int r = 0; r < 2; ++r) {                   // the 4 lanes of a quad share a row
            mt[r] = fmaxf(mt[r], __shfl_xor_sync(0xffffffffu, mt[r], 1));
            mt[r] = fmaxf(mt[r], __shfl_xor_sync(0xffffffffu, mt[r], 2));
        }
        // a fully masked row has mt = -inf: subtract 0 instead, so p = exp2(-inf) = 0 and the
        // tile state is the identity (-inf, 0, 0)
        const float base[2] = {mt[0] == -INFINITY ? 0.0f : mt[0], mt[1] == -INFINITY ? 0.0f : mt[1]};
        float dt[2] = {0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < THM3_BLOCK_N / 8; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[j][e] = thm3_exp2(s[j][e] - base[e >> 1]);
                dt[e >> 1] += s[j][e];
            }
        }
        // P as A fragments of the second product, straight from the C fragments of S:
        // k-step kk covers keys 16kk..16kk+15 = C fragments 2kk (a[0], a[1]) and 2kk+1 (a[2], a[3])
        unsigned pf[THM3_BLOCK_N / 16][4];
#pragma unroll
        for (int kk = 0; kk < THM3_BLOCK_N / 16; ++kk) {
            pf[kk][0] = thm3_pack2(s[2 * kk][0], s[2 * kk][1]);
            pf[kk][1] = thm3_pack2(s[2 * kk][2], s[2 * kk][3]);
            pf[kk][2] = thm3_pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
            pf[kk][3] = thm3_pack2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        }
        const float mt_nat[2] = {__fmul_rn(mt[0], THM3_LN2), __fmul_rn(mt[1], THM3_LN2)};

        // The tile's o = P V, 16 columns at a time, merged into the running state at once.
        // B[key][n] = V[key][16dd + n]: ldmatrix.trans of keys 16kk + (0..7 | 8..15) at
        // columns 16dd + (0..7 | 8..15) gives b0, b1 of columns 16dd.. and 16dd+8..
        const thm3_merge c[2] = {thm3_merge_rows(m_run[0], d_run[0], mt_nat[0], dt[0]),
                                 thm3_merge_rows(m_run[1], d_run[1], mt_nat[1], dt[1])};
#pragma unroll
        for (int dd = 0; dd < THM3_DIM / 16; ++dd) {
            float acc0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, acc1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int kk = 0; kk < THM3_BLOCK_N / 16; ++kk) {
                const int mat = lane >> 3;
                const int key = 16 * kk + (lane & 7) + ((mat & 1) << 3);
                unsigned b0, b1, b2, b3;
                thm3_ldmatrix_x4_trans(s_vt + thm3_tile_offset(key, 2 * dd + (mat >> 1)), b0, b1, b2, b3);
                thm3_mma(acc0, pf[kk], b0, b1);
                thm3_mma(acc1, pf[kk], b2, b3);
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                o[2 * dd][e] = thm3_merge_lane(c[e >> 1], o[2 * dd][e], acc0[e]);
                o[2 * dd + 1][e] = thm3_merge_lane(c[e >> 1], o[2 * dd + 1][e], acc1[e]);
            }
        }
        m_run[0] = c[0].m; m_run[1] = c[1].m;
        d_run[0] = c[0].d; d_run[1] = c[1].d;
        __syncthreads();                                // this stage is refilled next
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        d_run[r] += __shfl_xor_sync(0xffffffffu, d_run[r], 1);
        d_run[r] += __shfl_xor_sync(0xffffffffu, d_run[r], 2);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int row = r ? row_b : row_a;
        if (row >= n_q) continue;
        const size_t at = (size_t)bh * n_q + row;
        if (num_splits == 1) {
            unsigned* dst = (unsigned*)(out + at * THM3_DIM);
            const float inverse = thm3_inverse(d_run[r]);
#pragma unroll
            for (int j = 0; j < THM3_DIM / 8; ++j)
                dst[4 * j + t4] = thm3_pack2(o[j][2 * r] * inverse, o[j][2 * r + 1] * inverse);
            if (t4 == 0) lse[at] = thm3_lse(m_run[r], d_run[r]);
        } else {
            const size_t pat = (size_t)split * batch_heads * n_q + at;
#pragma unroll
            for (int j = 0; j < THM3_DIM / 8; ++j) {
                part_o[pat * THM3_DIM + 8 * j + 2 * t4] = o[j][2 * r];
                part_o[pat * THM3_DIM + 8 * j + 2 * t4 + 1] = o[j][2 * r + 1];
            }
            if (t4 == 0) { part_m[pat] = m_run[r]; part_d[pat] = d_run[r]; }
        }
    }
}
"""


_FORWARD_32 = r"""
// ---- forward, float32 with plain FMA ---------------------------------------------------
// A block of THM3_WARPS warps owns THM3_BLOCK_M = 4 * THM3_WARPS queries, warp w the rows
// 4w..4w+3; per K/V tile of THM3_BLOCK_N = 32 keys lane j scores key j, the warp takes the
// row max and sum by shuffles, and lane l accumulates columns l, l + 32, ... of P V.
static_assert(THM3_BLOCK_N == 32, "one key a lane");
static_assert(THM3_BLOCK_M == 4 * THM3_WARPS, "a warp owns 4 query rows");
#define THM3_ROWS 4
#define THM3_KSTRIDE (THM3_DIM + 1)                     // padded: lane j reads row j, no conflicts

// (a minimum of one block: with the calls of the math slow paths ptxas otherwise holds the
// kernel to 40 registers, and it spills)
extern "C" __global__ void __launch_bounds__(THM3_THREADS, 1)
thm3_attention_fwd(const float* __restrict__ q, const float* __restrict__ k,
                   const float* __restrict__ v, float* __restrict__ out,
                   float* __restrict__ lse, float* __restrict__ part_o,
                   float* __restrict__ part_m, float* __restrict__ part_d,
                   int n_q, int n_kv, int tiles_per_split, float scale_log2) {
    const int q_tile = THM3_CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int split = blockIdx.y, num_splits = gridDim.y;
    const int bh = blockIdx.z, batch_heads = gridDim.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int q0 = q_tile * THM3_BLOCK_M;

    const float* qb = q + (size_t)bh * n_q * THM3_DIM;
    const float* kb = k + (size_t)bh * n_kv * THM3_DIM;
    const float* vb = v + (size_t)bh * n_kv * THM3_DIM;
    float* s_q = (float*)thm3_smem;
    float* s_k = s_q + THM3_BLOCK_M * THM3_DIM;
    float* s_v = s_k + THM3_BLOCK_N * THM3_KSTRIDE;

    for (int i = threadIdx.x; i < THM3_BLOCK_M * THM3_DIM; i += THM3_THREADS) {
        const int row = i / THM3_DIM;
        s_q[i] = q0 + row < n_q ? qb[(size_t)(q0 + row) * THM3_DIM + i % THM3_DIM] : 0.0f;
    }
    float o[THM3_ROWS][THM3_DIM / 32];
    float m_run[THM3_ROWS], d_run[THM3_ROWS];
#pragma unroll
    for (int r = 0; r < THM3_ROWS; ++r) {
        m_run[r] = -INFINITY;
        d_run[r] = 0.0f;
#pragma unroll
        for (int i = 0; i < THM3_DIM / 32; ++i) o[r][i] = 0.0f;
    }

    const thm3_range tiles = thm3_key_tiles(q0, n_q, n_kv, split, tiles_per_split);
    for (int tile = tiles.begin; tile < tiles.end; ++tile) {
        const int key0 = tile * THM3_BLOCK_N;
        __syncthreads();                                // the previous tile is consumed
        for (int i = threadIdx.x; i < THM3_BLOCK_N * THM3_DIM; i += THM3_THREADS) {
            const int row = i / THM3_DIM, col = i % THM3_DIM;
            const bool inside = key0 + row < n_kv;
            const size_t at = (size_t)(key0 + row) * THM3_DIM + col;
            s_k[row * THM3_KSTRIDE + col] = inside ? kb[at] : 0.0f;
            s_v[i] = inside ? vb[at] : 0.0f;
        }
        __syncthreads();

        float t[THM3_ROWS];
#pragma unroll
        for (int r = 0; r < THM3_ROWS; ++r) t[r] = 0.0f;
        const float* krow = s_k + lane * THM3_KSTRIDE;
        const float* qrow = s_q + warp * THM3_ROWS * THM3_DIM;
#pragma unroll 8
        for (int c = 0; c < THM3_DIM; ++c) {
            const float kc = krow[c];
#pragma unroll
            for (int r = 0; r < THM3_ROWS; ++r) t[r] = fmaf(qrow[r * THM3_DIM + c], kc, t[r]);
        }
#pragma unroll
        for (int r = 0; r < THM3_ROWS; ++r) {
            const int row = q0 + warp * THM3_ROWS + r;
            // t = fl(s c) once; the warp max is over exactly the values subtracted below
            float tr = __fmul_rn(t[r], scale_log2);
            if (thm3_masked(row, key0 + lane, n_q, n_kv)) tr = -INFINITY;
            float mt = tr;
#pragma unroll
            for (int w = 16; w > 0; w >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, w));
            const float p = thm3_exp2(tr - (mt == -INFINITY ? 0.0f : mt));
            float dt = p;
#pragma unroll
            for (int w = 16; w > 0; w >>= 1) dt += __shfl_xor_sync(0xffffffffu, dt, w);
            float acc[THM3_DIM / 32];
#pragma unroll
            for (int i = 0; i < THM3_DIM / 32; ++i) acc[i] = 0.0f;
#pragma unroll 8
            for (int j = 0; j < THM3_BLOCK_N; ++j) {
                const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
                for (int i = 0; i < THM3_DIM / 32; ++i)
                    acc[i] = fmaf(pj, s_v[j * THM3_DIM + lane + 32 * i], acc[i]);
            }
            const thm3_merge c = thm3_merge_rows(m_run[r], d_run[r], __fmul_rn(mt, THM3_LN2), dt);
#pragma unroll
            for (int i = 0; i < THM3_DIM / 32; ++i) o[r][i] = thm3_merge_lane(c, o[r][i], acc[i]);
            m_run[r] = c.m;
            d_run[r] = c.d;
        }
    }

#pragma unroll
    for (int r = 0; r < THM3_ROWS; ++r) {
        const int row = q0 + warp * THM3_ROWS + r;
        if (row >= n_q) continue;
        const size_t at = (size_t)bh * n_q + row;
        if (num_splits == 1) {
            const float inverse = thm3_inverse(d_run[r]);
#pragma unroll
            for (int i = 0; i < THM3_DIM / 32; ++i)
                out[at * THM3_DIM + lane + 32 * i] = o[r][i] * inverse;
            if (lane == 0) lse[at] = thm3_lse(m_run[r], d_run[r]);
        } else {
            const size_t pat = (size_t)split * batch_heads * n_q + at;
#pragma unroll
            for (int i = 0; i < THM3_DIM / 32; ++i) part_o[pat * THM3_DIM + lane + 32 * i] = o[r][i];
            if (lane == 0) { part_m[pat] = m_run[r]; part_d[pat] = d_run[r]; }
        }
    }
}
"""


def variant_name(dtype: str, dim: int, causal: bool, num_warps: int) -> str:
    """A file-name-safe name of one kernel variant, e.g. attention-bfloat16-d128-causal-w4."""
    return (f"attention-{_dtype_name(dtype)}-d{dim}-{'causal' if causal else 'full'}"
            f"-w{num_warps}")


def render_attention(merge_src: str, *, dim: int, dtype: str, causal: bool = False,
                     num_warps: int | None = None, primitives: str | None = None) -> str:
    """The CUDA source of one variant: kernels `thm3_attention_fwd` (grid (q tiles, splits,
    batch * heads), `KernelConfig.threads` threads, `shared_bytes` of dynamic shared memory)
    and `thm3_attention_merge` (grid ceil(rows / 4), 128 threads).  `merge_src` defines
    `thm3_merge thm3_merge_rows(a_m, a_d, b_m, b_d)`, the derived combine in its split form
    (`thm3.gpu.emit_attention.merge_source`); `primitives` fills
    the device-primitive hole (default: inline PTX)."""
    dtype = _dtype_name(dtype)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype}")
    if dim not in DIMS:
        raise ValueError(f"dim must be one of {DIMS}, not {dim}")
    cfg = kernel_config(dtype, dim, n_q=10**9, num_warps=num_warps)
    sixteen = dtype != "float32"
    # Where ptxas keeps the tile-load loops unrolled without spilling (bench/results/sass-*,
    # tests/test_sass.py): with one or two warps a thread issues many copies and their
    # hoisted addresses spill; D = 64 with 8 warps sits at 128 registers, where the unrolled
    # loads of the full (not causal) variant cost one spilled value a tile.
    unroll_loads = cfg.num_warps == 4 or (cfg.num_warps == 8 and (dim == 128 or causal))
    return _SOURCE.substitute(
        variant=f"{variant_name(dtype, dim, causal, cfg.num_warps)}, "
                f"{cfg.block_m} queries x {cfg.block_n} keys a tile",
        merge=merge_src.strip("\n"),
        primitives=(ptx_primitives(dtype) if primitives is None else primitives).strip("\n"),
        dim=dim, num_warps=cfg.num_warps, block_m=cfg.block_m, block_n=cfg.block_n,
        causal=int(bool(causal)), dtype=dtype,
        elem_c="unsigned short" if sixteen else "float",
        store_elem="*p = thm3_to_elem(x);" if sixteen else "*p = x;",
        forward=Template(_FORWARD_16 if sixteen else _FORWARD_32).substitute(
            load_unroll="#pragma unroll" if unroll_loads else "#pragma unroll 1",
            # decoding (one warp) at D = 128: a minimum of one block lifts the cap that the
            # math functions' calls put on the registers (168, where it spilled)
            launch_bounds="THM3_THREADS, 1" if (cfg.num_warps, dim) == (1, 128) else "THM3_THREADS",
        ).strip("\n"),
    )


# --------------------------------------------------------------------------------------
# CuPy runner
# --------------------------------------------------------------------------------------


class BackendUnavailable(RuntimeError):
    """CuPy is not installed here, or it sees no CUDA device."""


def _cupy():
    """CuPy, or BackendUnavailable naming the extra that installs it."""
    try:
        import cupy
    except ImportError as err:
        raise BackendUnavailable(
            f"CuPy is not installed ({err}): pip install 'thm3[cuda12]' for CUDA 12 or "
            f"'thm3[cuda13]' for CUDA 13, or run with backend='numpy'") from None
    return cupy


def _device(cupy) -> int:
    """The current device's id; BackendUnavailable when CuPy sees none."""
    try:
        return cupy.cuda.runtime.getDevice()
    except Exception as err:          # no driver, no device, or CuPy built for another CUDA
        raise BackendUnavailable(f"CuPy sees no CUDA device ({type(err).__name__}: {err}); check "
                                 f"the driver, and that the extra (thm3[cuda12] / thm3[cuda13]) "
                                 f"matches it") from None

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


@functools.lru_cache(maxsize=64)
def _rendered(lane: str, dim: int, dtype: str, causal: bool, num_warps: int) -> str:
    return render_attention(lane, dim=dim, dtype=dtype, causal=causal, num_warps=num_warps)


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
        return _dtype_name(str(x.dtype))

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
                   splits: int | None = None, merge_src: str | None = None,
                   source: str | None = None, num_warps: int | None = None):
    """(out, lse) on the GPU.  q, k, v: CuPy arrays (float16, float32) or CUDA torch
    tensors (also bfloat16), (batch, heads, n, D) with D in {64, 128}; out has q's dtype,
    lse is float32.  `source` is a pre-rendered variant (its shape must be the one
    `kernel_config` picks, or `num_warps`); otherwise it is rendered from `merge_src`, the
    derived combine's merge (one of the two is required).  Inputs off 16-byte alignment
    (cp.async reads 16 bytes at a time) are copied to fresh, aligned arrays first."""
    if source is None and merge_src is None:
        raise TypeError("attention_cupy needs the derived combine (merge_src=...) or a rendered "
                        "source: thm3 keeps no hand-written one")
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
        source = _rendered(merge_src, dim, dtype, bool(causal), cfg.num_warps)
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
              splits: int | None = None, backend: str = "cupy", combine=None,
              merge_src: str | None = None):
    """softmax(scale q K^T) V and its natural-log logsumexp per query row, over
    (batch, heads, n, D) arrays; n_q may differ from n_kv, and causal aligns the last
    query with the last key (query i sees keys j <= i + n_kv - n_q).  A row that sees no
    key gives out 0 and lse -inf.  backend "cupy" runs the rendered kernels (`merge_src`
    is the derived combine's lane source), "numpy" the same algorithm on the CPU
    (`combine` the derived combine as a Python callable)."""
    match backend:
        case "numpy":
            return attention_numpy(q, k, v, causal, scale, splits, combine=combine)
        case "cupy":
            return attention_cupy(q, k, v, causal=causal, scale=scale, splits=splits,
                                  merge_src=merge_src)
        case _:
            raise ValueError(f"backend must be 'numpy' or 'cupy', not {backend!r}")


__all__ = ["attention", "attention_numpy", "attention_cupy", "BackendUnavailable", "render_attention",
           "ptx_primitives", "kernel_config", "KernelConfig", "choose_splits",
           "normalize_splits", "tiles_per_split", "key_tile_range", "variant_name",
           "rowwise", "round_to_bfloat16", "LOG2E", "LN2", "MAX_SPLITS"]
