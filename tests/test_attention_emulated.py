"""FlashAttention's rendered CUDA run on the CPU under a small emulator of the CUDA subset it
uses (threads as fibers, ldmatrix and mma.sync by the PTX ISA's fragment tables), and the
CuPy runner driving it through a stand-in for CuPy.  The emulator replaces only the
primitives hole (inline PTX) by C++; everything else in the kernels (tiling, swizzle,
fragment bookkeeping, masks, split-K, merge) runs as rendered."""
from __future__ import annotations

import hashlib
import math
import os
import shutil
import subprocess

import numpy as np
import pytest

from thm3.gpu import api
from thm3.gpu.render.attention import render_attention
from thm3.gpu.runtime import attention as fa

from attention_support import (merge_src, twin, naive, BF16_TOL, rel_err, assert_lse, seeded, inputs, representable, nvrtc_compile)

# --------------------------------------------------------------------------------------
# the rendered CUDA, run on the CPU under an emulator
# --------------------------------------------------------------------------------------

EMULATOR = r"""// Host emulation of the CUDA subset that gpu/render/attention.py's kernels use.  Every CUDA
// thread is a fiber (ucontext) on one OS thread; __syncthreads and the warp-collective
// operations (shuffles, ldmatrix, mma.sync) are barriers between fibers.  ldmatrix and
// mma follow the PTX ISA's fragment layouts, written here independently of the kernels;
// cp.async copies land only at cp.async.wait_group, so reading a stage too early reads the
// 0xFF (NaN) filling of shared memory.  Two policies, chosen at run time: "lazy"
// (round-robin threads; cp.async lands at its wait) finds reads before the wait, "eager"
// (the lowest runnable thread runs as far as it can, so warp 0 races ahead of the others
// up to each __syncthreads; cp.async lands at once) finds stages refilled while another
// warp still reads them.
#include <ucontext.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __launch_bounds__(...)
#define __shared__
#define __align__(n) __attribute__((aligned(n)))

struct emu_dim3 { unsigned x = 1, y = 1, z = 1; };

alignas(128) unsigned char thm3_smem[256 * 1024];

namespace emu {
[[noreturn]] inline void fail(const char* what) { fprintf(stderr, "emulator: %s\n", what); exit(3); }

struct Barrier { int count = 0; unsigned gen = 0; };
struct Copy { unsigned dst; const unsigned char* src; unsigned bytes; };
struct Fiber {
    ucontext_t ctx;
    emu_dim3 tid;
    Barrier* wait = nullptr;
    unsigned wait_gen = 0;
    bool done = false;
    std::vector<char> stack;
    std::vector<Copy> open;                     // issued, not committed
    std::vector<std::vector<Copy>> groups;      // committed, not yet landed
};
struct Warp { Barrier bar; uint32_t slot[32][8]; };

inline ucontext_t sched;
inline Fiber* cur = nullptr;
inline std::vector<Fiber> fibers;
inline std::vector<Warp> warps;
inline Barrier block_bar;
inline int nthreads = 0;
inline unsigned smem_limit = 0;
inline emu_dim3 block_idx, grid_dim, block_dim;
inline std::function<void()> body;
inline std::vector<std::pair<const unsigned char*, size_t>> inputs;
inline bool eager = false;

inline void yield() { swapcontext(&cur->ctx, &sched); }

inline void arrive(Barrier& b, int n) {
    const unsigned g = b.gen;
    if (++b.count == n) { b.count = 0; b.gen++; return; }
    cur->wait = &b;
    cur->wait_gen = g;
    while (b.gen == g) yield();
    cur->wait = nullptr;
}

inline int lane() { return cur->tid.x & 31; }
inline Warp& warp() { return warps[cur->tid.x >> 5]; }
inline void warp_sync() { arrive(warp().bar, 32); }

inline void check_smem(unsigned addr, unsigned bytes) {
    if ((size_t)addr + bytes > smem_limit) fail("shared memory access beyond the dynamic size");
}
inline void check_input(const unsigned char* p, size_t bytes) {
    for (auto& r : inputs)
        if (p >= r.first && p + bytes <= r.first + r.second) return;
    fail("cp.async reads outside the inputs");
}

inline void entry() { body(); cur->done = true; }

inline void launch(emu_dim3 grid, int threads, unsigned smem, std::function<void()> kernel) {
    if (smem > sizeof(thm3_smem)) fail("dynamic shared memory too large");
    grid_dim = grid;
    block_dim = emu_dim3{(unsigned)threads, 1, 1};
    nthreads = threads;
    smem_limit = smem;
    body = kernel;
    for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; ++x) {
        block_idx = emu_dim3{x, y, z};
        memset(thm3_smem, 0xFF, sizeof(thm3_smem));
        fibers.assign(threads, Fiber{});
        warps.assign((threads + 31) / 32, Warp{});
        block_bar = Barrier{};
        for (int t = 0; t < threads; ++t) {
            Fiber& f = fibers[t];
            f.tid = emu_dim3{(unsigned)t, 0, 0};
            f.stack.resize(256 * 1024);
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack.data();
            f.ctx.uc_stack.ss_size = f.stack.size();
            f.ctx.uc_link = &sched;
            makecontext(&f.ctx, entry, 0);
        }
        for (;;) {
            bool alive = false, ran = false;
            for (auto& f : fibers) {
                if (f.done) continue;
                alive = true;
                if (f.wait && f.wait->gen == f.wait_gen) continue;
                cur = &f;
                swapcontext(&sched, &f.ctx);
                ran = true;
                if (eager) break;                   // start again from thread 0
            }
            if (!alive) break;
            if (!ran) fail("deadlock: every thread waits at a barrier");
        }
    }
}

inline void land(const std::vector<Copy>& group) {
    for (const Copy& c : group) {
        memset(thm3_smem + c.dst, 0, 16);
        memcpy(thm3_smem + c.dst, c.src, c.bytes);
    }
}
}  // namespace emu

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define gridDim (emu::grid_dim)
#define blockDim (emu::block_dim)

inline void __syncthreads() { emu::arrive(emu::block_bar, emu::nthreads); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
// a template, so that a rendered helper block's own plain __int_as_float wins where present
template <class I> inline float __int_as_float(I x) { int i = (int)x; float f; memcpy(&f, &i, 4); return f; }

template <class T> T emu_shuffle(T v, int src_of_lane_xor, bool is_xor) {
    static_assert(sizeof(T) == 4, "32-bit shuffles");
    uint32_t bits; memcpy(&bits, &v, 4);
    emu::warp().slot[emu::lane()][0] = bits;
    emu::warp_sync();
    const int src = is_xor ? (emu::lane() ^ src_of_lane_xor) : (src_of_lane_xor & 31);
    bits = emu::warp().slot[src][0];
    emu::warp_sync();
    T r; memcpy(&r, &bits, 4);
    return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m) { return emu_shuffle(v, m, true); }
template <class T> T __shfl_sync(unsigned, T v, int src) { return emu_shuffle(v, src, false); }

// ---- 16-bit formats ---------------------------------------------------------------------
inline float emu_to_float(uint16_t h) {
#if EMU_BF16
    uint32_t b = (uint32_t)h << 16; float f; memcpy(&f, &b, 4); return f;
#else
    _Float16 x; memcpy(&x, &h, 2); return (float)x;
#endif
}
inline uint16_t emu_from_float(float f) {
#if EMU_BF16
    uint32_t b; memcpy(&b, &f, 4);
    if (std::isnan(f)) return 0x7FC0;
    return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
#else
    _Float16 x = (_Float16)f; uint16_t h; memcpy(&h, &x, 2); return h;
#endif
}

// ---- the primitives hole, emulated ----------------------------------------------------
inline unsigned thm3_smem_addr(const void* p) {
    return (unsigned)((const unsigned char*)p - thm3_smem);
}
inline int thm3_tid_now() { return (int)threadIdx.x; }
inline void thm3_cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
    if (dst % 16 || (uintptr_t)src % 16) emu::fail("cp.async address not 16-byte aligned");
    if (src_bytes != 0 && src_bytes != 16) emu::fail("cp.async src size");
    emu::check_smem(dst, 16);
    if (src_bytes) emu::check_input((const unsigned char*)src, src_bytes);
    if (emu::eager) emu::land({{dst, (const unsigned char*)src, src_bytes}});
    else emu::cur->open.push_back({dst, (const unsigned char*)src, src_bytes});
}
inline void thm3_cp_async_commit() {
    emu::cur->groups.push_back(emu::cur->open);
    emu::cur->open.clear();
}
template <int N> inline void thm3_cp_async_wait() {
    auto& gs = emu::cur->groups;
    while ((int)gs.size() > N) { emu::land(gs.front()); gs.erase(gs.begin()); }
}
inline uint16_t emu_smem16(unsigned addr) {
    emu::check_smem(addr, 2);
    uint16_t h; memcpy(&h, thm3_smem + addr, 2); return h;
}
// lanes 8i..8i+7 give the row addresses of matrix i; without .trans lane l receives
// row l/4, columns 2(l%4), 2(l%4)+1; with .trans rows 2(l%4), 2(l%4)+1 of column l/4
inline void emu_ldmatrix(unsigned addr, bool trans, unsigned* r) {
    if (addr % 16) emu::fail("ldmatrix row address not 16-byte aligned");
    emu::check_smem(addr, 16);
    emu::warp().slot[emu::lane()][0] = addr;
    emu::warp_sync();
    const int l = emu::lane();
    for (int i = 0; i < 4; ++i) {
        uint32_t lo, hi;
        if (!trans) {
            const unsigned row = emu::warp().slot[8 * i + l / 4][0];
            lo = emu_smem16(row + 2 * (2 * (l % 4)));
            hi = emu_smem16(row + 2 * (2 * (l % 4) + 1));
        } else {
            lo = emu_smem16(emu::warp().slot[8 * i + 2 * (l % 4)][0] + 2 * (l / 4));
            hi = emu_smem16(emu::warp().slot[8 * i + 2 * (l % 4) + 1][0] + 2 * (l / 4));
        }
        r[i] = lo | (hi << 16);
    }
    emu::warp_sync();
}
inline void thm3_ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    unsigned r[4]; emu_ldmatrix(addr, false, r); r0 = r[0]; r1 = r[1]; r2 = r[2]; r3 = r[3];
}
inline void thm3_ldmatrix_x4_trans(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    unsigned r[4]; emu_ldmatrix(addr, true, r); r0 = r[0]; r1 = r[1]; r2 = r[2]; r3 = r[3];
}
// mma.m16n8k16 .row.col, from the PTX ISA's fragment tables (g = lane / 4, t = lane % 4):
// A element (r, k) sits in lane (r % 8) * 4 + (k % 8) / 2, register (r / 8) + 2 (k / 8),
// half k % 2; B element (k, n) in lane n * 4 + (k % 8) / 2, register k / 8, half k % 2;
// C element e of lane l is (g + 8 (e / 2), 2 t + e % 2).
inline void thm3_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    const int l = emu::lane();
    uint32_t* mine = emu::warp().slot[l];
    mine[0] = a[0]; mine[1] = a[1]; mine[2] = a[2]; mine[3] = a[3]; mine[4] = b0; mine[5] = b1;
    emu::warp_sync();
    auto half = [](uint32_t w, int h) { return emu_to_float((uint16_t)(h ? w >> 16 : w & 0xFFFF)); };
    auto A = [&](int r, int k) { return half(emu::warp().slot[(r % 8) * 4 + (k % 8) / 2][(r / 8) + 2 * (k / 8)], k % 2); };
    auto B = [&](int k, int n) { return half(emu::warp().slot[n * 4 + (k % 8) / 2][4 + k / 8], k % 2); };
    float d[4];
    for (int e = 0; e < 4; ++e) {
        const int row = l / 4 + 8 * (e / 2), col = 2 * (l % 4) + e % 2;
        float acc = 0.0f;
        for (int k = 0; k < 16; ++k) acc += A(row, k) * B(k, col);
        d[e] = c[e] + acc;
    }
    emu::warp_sync();
    for (int e = 0; e < 4; ++e) c[e] = d[e];
}
inline unsigned thm3_pack2(float lo, float hi) {
    return (unsigned)emu_from_float(lo) | ((unsigned)emu_from_float(hi) << 16);
}
inline unsigned short thm3_to_elem(float x) { return emu_from_float(x); }
inline float thm3_exp2(float x) { return exp2f(x); }"""

DRIVER = r"""// Runs thm3_attention_fwd (and thm3_attention_merge for splits > 1) under the emulator.
// Usage: driver IN OUT lazy|eager.  Input file: int32 batch_heads, n_q, n_kv, dim, splits, per_split, q_tiles, threads,
// shared_bytes; float32 scale_log2; then q, k, v as raw elements.  Output file: out as
// float32, then lse as float32.
static void read_exact(FILE* f, void* p, size_t n) {
    if (fread(p, 1, n, f) != n) emu::fail("short input file");
}

template <class T> struct Guarded {
    // an array with 256 guard bytes on each side, checked after the kernels ran
    std::vector<unsigned char> raw;
    size_t n;
    explicit Guarded(size_t count) : raw(count * sizeof(T) + 512 + 16, 0xAB), n(count) {}
    T* data() { return (T*)(((uintptr_t)raw.data() + 256 + 15) & ~(uintptr_t)15); }
    void check(const char* name) {
        unsigned char* lo = (unsigned char*)data();
        for (unsigned char* p = raw.data(); p < lo; ++p)
            if (*p != 0xAB) { fprintf(stderr, "write before %s\n", name); exit(4); }
        for (unsigned char* p = lo + n * sizeof(T); p < raw.data() + raw.size(); ++p)
            if (*p != 0xAB) { fprintf(stderr, "write after %s\n", name); exit(4); }
    }
};

int main(int argc, char** argv) {
    if (argc != 4) emu::fail("usage: driver IN OUT lazy|eager");
    emu::eager = strcmp(argv[3], "eager") == 0;
    FILE* f = fopen(argv[1], "rb");
    if (!f) emu::fail("cannot open input");
    int32_t h[9];
    float scale_log2;
    read_exact(f, h, sizeof h);
    read_exact(f, &scale_log2, 4);
    const int bh = h[0], n_q = h[1], n_kv = h[2], dim = h[3], splits = h[4], per_split = h[5],
              q_tiles = h[6], threads = h[7], shared = h[8];
    if (dim != THM3_DIM) emu::fail("dim does not match the rendered kernel");
    const size_t nq = (size_t)bh * n_q * dim, nkv = (size_t)bh * n_kv * dim;
    Guarded<thm3_elem> q(nq), k(nkv), v(nkv), out(nq);
    read_exact(f, q.data(), nq * sizeof(thm3_elem));
    read_exact(f, k.data(), nkv * sizeof(thm3_elem));
    read_exact(f, v.data(), nkv * sizeof(thm3_elem));
    fclose(f);
    emu::inputs = {{(const unsigned char*)q.data(), nq * sizeof(thm3_elem)},
                   {(const unsigned char*)k.data(), nkv * sizeof(thm3_elem)},
                   {(const unsigned char*)v.data(), nkv * sizeof(thm3_elem)}};
    const size_t rows = (size_t)bh * n_q;
    Guarded<float> lse(rows), po(splits > 1 ? splits * rows * dim : 1),
        pm(splits > 1 ? splits * rows : 1), pd(splits > 1 ? splits * rows : 1);
    float* part_o = splits > 1 ? po.data() : nullptr;
    float* part_m = splits > 1 ? pm.data() : nullptr;
    float* part_d = splits > 1 ? pd.data() : nullptr;
    emu::launch(emu_dim3{(unsigned)q_tiles, (unsigned)splits, (unsigned)bh}, threads, shared, [&] {
        thm3_attention_fwd(q.data(), k.data(), v.data(), out.data(), lse.data(), part_o, part_m,
                           part_d, n_q, n_kv, per_split, scale_log2);
    });
    if (splits > 1)
        emu::launch(emu_dim3{(unsigned)((rows + 3) / 4), 1, 1}, 128, 0, [&] {
            thm3_attention_merge(part_o, part_m, part_d, out.data(), lse.data(), (int)rows, splits);
        });
    out.check("out"); lse.check("lse"); po.check("part_o"); pm.check("part_m"); pd.check("part_d");
    FILE* g = fopen(argv[2], "wb");
    for (size_t i = 0; i < nq; ++i) {
        float x;
        if constexpr (sizeof(thm3_elem) == 2) x = emu_to_float(out.data()[i]);
        else x = out.data()[i];
        fwrite(&x, 4, 1, g);
    }
    fwrite(lse.data(), 4, rows, g);
    fclose(g);
    return 0;
}"""


@pytest.fixture(scope="session")
def emulator_dir(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed: the CUDA emulator needs it")
    return tmp_path_factory.mktemp("attention-emulator")


def emulated(build_dir, q, k, v, *, fmt, causal, scale=None, splits=1, num_warps=None,
             policy="lazy", lane=None):
    """Run the rendered kernels under the emulator; (out, lse) as float32."""
    b, h, n_q, dim = q.shape
    n_kv = k.shape[2]
    cfg = fa.kernel_config(fmt, dim, n_q, num_warps)
    kv_tiles = -(-n_kv // cfg.block_n)
    splits = fa.normalize_splits(kv_tiles, splits)
    per = fa.tiles_per_split(kv_tiles, splits)
    src = render_attention(lane or merge_src(), dim=dim, dtype=fmt, causal=causal,
                              num_warps=cfg.num_warps, primitives="")
    program = (f"#define EMU_BF16 {int(fmt == 'bfloat16')}\n" + EMULATOR + "\n" + src + "\n"
               + DRIVER)
    name = hashlib.sha256(program.encode()).hexdigest()[:16]
    exe = build_dir / name
    if not exe.exists():
        (build_dir / f"{name}.cpp").write_text(program)
        result = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-o", str(exe),
                                 str(build_dir / f"{name}.cpp")], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-4000:]
    match fmt:
        case "float32":
            raw = [x.astype(np.float32) for x in (q, k, v)]
        case "float16":
            raw = [x.astype(np.float16).view(np.uint16) for x in (q, k, v)]
        case "bfloat16":
            raw = [(fa.round_to_bfloat16(x).view(np.uint32) >> 16).astype(np.uint16)
                   for x in (q, k, v)]
    scale = 1.0 / math.sqrt(dim) if scale is None else scale
    header = np.array([b * h, n_q, n_kv, dim, splits, per, -(-n_q // cfg.block_m),
                       cfg.threads, cfg.shared_bytes], np.int32).tobytes()
    header += np.float32(scale * fa.LOG2E).tobytes()
    job = build_dir / f"{name}-{os.getpid()}.in"
    res = build_dir / f"{name}-{os.getpid()}.out"
    job.write_bytes(header + b"".join(np.ascontiguousarray(x).tobytes() for x in raw))
    result = subprocess.run([str(exe), str(job), str(res), policy], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    data = np.fromfile(res, np.float32)
    return data[:q.size].reshape(q.shape), data[q.size:].reshape(q.shape[:3])


EMULATED = [
    # fmt, b, h, n_q, n_kv, dim, causal, splits, num_warps
    ("bfloat16", 1, 2, 70, 150, 64, False, 1, None),      # 8 warps, tails in q and kv
    ("bfloat16", 2, 1, 150, 70, 128, True, 1, None),      # n_q > n_kv: fully masked rows
    ("bfloat16", 1, 2, 90, 200, 64, True, 3, 4),          # split-K with causal: empty splits
    ("float16", 1, 2, 1, 300, 128, False, 4, None),       # decoding: one warp, split-K
    ("float16", 1, 1, 33, 130, 64, True, 2, 2),
    ("bfloat16", 1, 1, 5, 64, 128, True, 1, None),        # one tile exactly
    ("float32", 2, 1, 40, 90, 64, True, 3, None),
    ("float32", 1, 2, 20, 50, 128, False, 1, None),
    ("float32", 1, 1, 50, 20, 64, True, 2, None),         # fully masked rows, split-K
]


@pytest.mark.parametrize("fmt,b,h,n_q,n_kv,dim,causal,splits,num_warps", EMULATED)
def test_emulated_kernels(emulator_dir, fmt, b, h, n_q, n_kv, dim, causal, splits, num_warps):
    rng = seeded(fmt, b, h, n_q, n_kv, dim, causal, splits)
    q, k, v = inputs(rng, b, h, n_q, n_kv, dim, fmt)
    ref, ref_lse = naive(q, k, v, causal)
    twin_out, twin_lse = twin(q, k, v, causal, None, splits, input_dtype=fmt)
    lazy = emulated(emulator_dir, q, k, v, fmt=fmt, causal=causal, splits=splits,
                    num_warps=num_warps, policy="lazy")
    eager = emulated(emulator_dir, q, k, v, fmt=fmt, causal=causal, splits=splits,
                     num_warps=num_warps, policy="eager")
    # the same arithmetic in the same order whatever the schedule
    assert np.array_equal(lazy[0], eager[0]) and np.array_equal(lazy[1], eager[1])
    out, lse = lazy
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    assert_lse(lse, ref_lse, 2e-6)
    empty = np.isneginf(ref_lse)
    assert (out[empty] == 0).all()
    match fmt:
        case "float32":
            assert rel_err(out, ref) < 1e-5
            assert rel_err(out, twin_out) < 1e-6
        case "float16":
            assert rel_err(out, ref) < 2e-3
            assert rel_err(out, twin_out) < 2 * 2.0**-11
        case "bfloat16":
            assert rel_err(out, ref) < BF16_TOL
            assert rel_err(out, twin_out) < 2 * 2.0**-8


def test_emulated_large_logits(emulator_dir):
    """Scores 128 * (+-78) = +-9984 plus a few units from the other columns, held exactly
    by bfloat16 inputs (bfloat16 spaces values near 1e4 by 64, so the spread comes from
    the sum)."""
    rng = np.random.default_rng(12)
    b, h, n_q, n_kv, dim = 1, 1, 64, 150, 64
    q, k, v = (0.3 * x for x in inputs(rng, b, h, n_q, n_kv, dim))
    q[..., 0] = 128.0
    q[:, :, ::2, 0] = -128.0
    k[..., 0] = np.where(rng.random((b, h, n_kv)) < 0.5, -78.0, 78.0)
    q, k, v = (representable(x, "bfloat16") for x in (q, k, v))
    for fmt in ("bfloat16", "float32"):
        out, lse = emulated(emulator_dir, q, k, v, fmt=fmt, causal=True, scale=1.0, splits=2)
        ref, ref_lse = naive(q, k, v, True, 1.0)
        assert np.isfinite(out).all()
        assert rel_err(out, ref) < (BF16_TOL if fmt == "bfloat16" else 5e-3)
        assert_lse(lse, ref_lse, 1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_derived_combine_compiles_and_runs(emulator_dir, dtype):
    derived_lane = merge_src()
    src = render_attention(derived_lane, dim=128, dtype=dtype, causal=True)
    nvrtc_compile(src, "90")
    rng = np.random.default_rng(31)
    q, k, v = inputs(rng, 1, 2, 100, 140, 64, dtype)
    out, lse = emulated(emulator_dir, q, k, v, fmt=dtype, causal=True, splits=2,
                        lane=derived_lane)
    ref, ref_lse = naive(q, k, v, True)
    assert rel_err(out, ref) < (BF16_TOL if dtype == "bfloat16" else 1e-5)
    assert_lse(lse, ref_lse, 2e-6)


# The CuPy runner itself (argument order, grid, split buffers, the merge launch, the shared
# memory attribute), run against a stand-in for CuPy whose RawModule compiles the source it
# is given with the emulator in place of the PTX primitives, and launches through ctypes.

SHIM = r"""
template <class T> static void emu_input(const void* p, size_t n) {
    emu::inputs.push_back({(const unsigned char*)p, n * sizeof(T)});
}
extern "C" int emu_forward(unsigned gx, unsigned gy, unsigned gz, int threads, unsigned shared,
                           const thm3_elem* q, const thm3_elem* k, const thm3_elem* v,
                           thm3_elem* out, float* lse, float* po, float* pm, float* pd,
                           int n_q, int n_kv, int per_split, float scale_log2) {
    emu::inputs.clear();
    emu_input<thm3_elem>(q, (size_t)gz * n_q * THM3_DIM);
    emu_input<thm3_elem>(k, (size_t)gz * n_kv * THM3_DIM);
    emu_input<thm3_elem>(v, (size_t)gz * n_kv * THM3_DIM);
    emu::launch(emu_dim3{gx, gy, gz}, threads, shared, [&] {
        thm3_attention_fwd(q, k, v, out, lse, po, pm, pd, n_q, n_kv, per_split, scale_log2);
    });
    return 0;
}
extern "C" int emu_merge(unsigned gx, int threads, const float* po, const float* pm,
                         const float* pd, thm3_elem* out, float* lse, long long rows, int splits) {
    emu::launch(emu_dim3{gx, 1, 1}, threads, 0, [&] {
        thm3_attention_merge(po, pm, pd, out, lse, rows, splits);
    });
    return 0;
}
"""


class _DeviceArray(np.ndarray):
    """A NumPy array that answers `.data.ptr` as a CuPy array does."""

    @property
    def data(self):
        return type("Memory", (), {"ptr": self.ctypes.data})()


class _FakeCupy:
    """The part of CuPy that gpu/runtime/attention.py's runner touches."""

    def __init__(self, build_dir):
        import types
        self.build_dir, self.launches, self.modules = build_dir, [], 0
        fake = self

        class RawModule:
            def __init__(self, code, options=()):
                import ctypes
                fake.modules += 1
                start = code.index("// ---- device primitives")
                end = code.index("// ---- shapes")
                elem_bf16 = "bf16.bf16" in code
                program = (f"#define EMU_BF16 {int(elem_bf16)}\n" + EMULATOR + "\n"
                           + code[:start] + code[end:] + "\n" + SHIM)
                name = hashlib.sha256(program.encode()).hexdigest()[:16]
                lib = build_dir / f"{name}.so"
                if not lib.exists():
                    (build_dir / f"{name}.cpp").write_text(program)
                    result = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-shared", "-fPIC",
                                             "-o", str(lib), str(build_dir / f"{name}.cpp")],
                                            capture_output=True, text=True)
                    assert result.returncode == 0, result.stderr[-4000:]
                self.lib = ctypes.CDLL(str(lib))

            def get_function(self, name):
                return _FakeKernel(fake, self.lib, name)

        class Stream:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        self.RawModule = RawModule
        self.cuda = types.SimpleNamespace(
            runtime=types.SimpleNamespace(
                getDevice=lambda: 0,
                getDeviceProperties=lambda device: {"multiProcessorCount": 132}),
            get_current_stream=Stream)

    def empty(self, shape, dtype):
        return np.full(shape, np.nan if np.dtype(dtype).kind == "f" else 0xFF,
                       dtype=dtype).view(_DeviceArray)

    def full(self, shape, value, dtype):
        return np.full(shape, value, dtype=dtype).view(_DeviceArray)

    def ascontiguousarray(self, x):
        return np.ascontiguousarray(x).view(_DeviceArray)


class _FakeKernel:
    def __init__(self, fake, lib, name):
        self.fake, self.lib, self.name = fake, lib, name
        self.max_dynamic_shared_size_bytes = 48 * 1024

    def __call__(self, grid, block, args, shared_mem=0):
        import ctypes
        assert len(block) == 1 and block[0] % 32 == 0
        assert shared_mem <= self.max_dynamic_shared_size_bytes
        self.fake.launches.append((self.name, tuple(grid), tuple(block), shared_mem))

        def c(arg):
            match arg:
                case np.uint64():
                    return ctypes.c_void_p(int(arg) or None)
                case np.int32():
                    return ctypes.c_int(int(arg))
                case np.int64():
                    return ctypes.c_longlong(int(arg))
                case np.float32():
                    return ctypes.c_float(float(arg))
            raise TypeError(f"kernel argument of type {type(arg).__name__}")

        match self.name:
            case "thm3_attention_fwd":
                assert len(args) == 12
                grid = tuple(grid) + (1,) * (3 - len(grid))
                self.lib.emu_forward(*(ctypes.c_uint(g) for g in grid), ctypes.c_int(block[0]),
                                     ctypes.c_uint(shared_mem), *(c(a) for a in args))
            case "thm3_attention_merge":
                assert len(args) == 7
                self.lib.emu_merge(ctypes.c_uint(grid[0]), ctypes.c_int(block[0]),
                                   *(c(a) for a in args))


@pytest.mark.parametrize("fmt,n_q,n_kv,dim,causal,splits", [
    ("float16", 70, 150, 64, True, None),
    ("float16", 1, 3000, 128, False, None),               # decoding: split-K chosen, merged
    ("float32", 40, 90, 64, False, 2),
    ("float16", 90, 40, 64, True, 1),                     # fully masked rows
])
def test_cupy_runner_under_the_emulator(emulator_dir, monkeypatch, fmt, n_q, n_kv, dim, causal,
                                        splits):
    import sys
    fake = _FakeCupy(emulator_dir)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(fa, "_KERNELS", {})
    rng = seeded(fmt, n_q, n_kv, dim, causal, splits)
    q, k, v = inputs(rng, 1, 2, n_q, n_kv, dim, fmt)
    dq, dk, dv = (fake.ascontiguousarray(x.astype(fmt)) for x in (q, k, v))
    out, lse = api.attention(dq, dk, dv, causal=causal, splits=splits,
                            merge_src=merge_src())
    assert out.dtype == np.dtype(fmt) and out.shape == q.shape and lse.dtype == np.float32
    ref, ref_lse = naive(q, k, v, causal)
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    assert rel_err(out, ref) < (1e-5 if fmt == "float32" else 2e-3)
    assert_lse(lse, ref_lse, 2e-6)
    names = [launch[0] for launch in fake.launches]
    cfg = fa.kernel_config(fmt, dim, n_q)
    assert fake.launches[0][2] == (cfg.threads,) and fake.launches[0][3] == cfg.shared_bytes
    used = fake.launches[0][1][1]
    assert names == ["thm3_attention_fwd"] + (["thm3_attention_merge"] if used > 1 else [])
    if n_q == 1:
        assert used > 1                                 # decoding is split
    # a second call finds its compiled module
    api.attention(dq, dk, dv, causal=causal, splits=splits, merge_src=merge_src())
    assert fake.modules == 1
