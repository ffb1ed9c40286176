// FlashAttention: one query row of softmax(scale * q.K) V as a single pass over (k, v).
// thm3: attention kernel (bfloat16, D = 128, non-causal) with the derived combine.
// softmax-weighted sum: score scale·dot(q, k), state (m, d, o) carried onto (max, +, +) by d·e^m, o·e^m

// thm3 FlashAttention forward: attention-bfloat16-d128-full-w8, 128 queries x 64 keys a tile.
// Rendered by gpu/attention.py from the derived combine; one query row is a left fold over
// (k, v) with state (m, d, o), a K/V tile is a sublist, and thm3_combine_lane merges states.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

// ---- the derived combine, one lane of o at a time --------------------------------------
#ifndef THM3_HELPERS
#define THM3_HELPERS
// Helpers shared by every thm3 render (guarded, so that several renders concatenate).
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// a host compiler: the functions below are plain C++
#define __host__
#define __device__
#define __forceinline__ inline
#include <cstring>
#include <math.h>
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double f; std::memcpy(&f, &i, 8); return f; }
#endif
#define THM3_INF_F __int_as_float(0x7f800000)
#define THM3_NAN_F __int_as_float(0x7fc00000)
#define THM3_INF_D __longlong_as_double(0x7ff0000000000000LL)
#define THM3_NAN_D __longlong_as_double(0x7ff8000000000000LL)
// max and min as the NumPy reference has them: a NaN on either side propagates; a tie gives b
template <class A, class B>
__host__ __device__ __forceinline__ auto thm3_max(A a, B b) -> decltype(a + b) { return (a > b || a != a) ? a : b; }
template <class A, class B>
__host__ __device__ __forceinline__ auto thm3_min(A a, B b) -> decltype(a + b) { return (a < b || a != a) ? a : b; }
template <class T> __host__ __device__ __forceinline__ T thm3_abs(T a) { return a < 0 ? -a : a; }
template <class T> __host__ __device__ __forceinline__ T thm3_powi(T x, int n) {
    T r = 1;
    for (int k = 0; k < n; ++k) r *= x;
    return r;
}
#endif

#ifndef THM3_LANE_THM3_DERIVED_LANE_FLOAT32
#define THM3_LANE_THM3_DERIVED_LANE_FLOAT32
// thm3_derived_lane: the combine of `flash_attention` for one lane of its Vec fields (float); a is the earlier part
__host__ __device__ __forceinline__ void thm3_derived_lane(float a_m, float a_d, float a_o,
                                                           float b_m, float b_d, float b_o,
                                                           float& r_m, float& r_d, float& r_o) {
    const float t0 = thm3_max(a_m, b_m);
    const float t1 = a_m == t0 ? 1.0f : exp2f((a_m - t0) * 1.4426950408889634f);
    const float t2 = b_m == t0 ? 1.0f : exp2f((b_m - t0) * 1.4426950408889634f);
    r_m = t0;
    r_d = a_d * t1 + b_d * t2;
    r_o = a_o * t1 + t2 * b_o;
}
#endif

#ifndef THM3_ATTENTION_LANE
#define THM3_ATTENTION_LANE
// The kernel merges states (m, d, o) = (m, d, o) with the derived combine.
__host__ __device__ __forceinline__ void thm3_combine_lane(float a_m, float a_d, float a_o,
                                                           float b_m, float b_d, float b_o,
                                                           float& r_m, float& r_d, float& r_o) {
    thm3_derived_lane(a_m, a_d, a_o, b_m, b_d, b_o, r_m, r_d, r_o);
}
#endif

// The combine's o part is linear in the two o's: o = o_a * alpha_a + o_b * alpha_b, the
// alphas depending on m and d alone.  So each row asks the derived combine for (m, d) and
// for its two coefficients (the combine of unit o lanes) once, and every lane of o costs one
// multiply and one FMA; calling the combine once a lane would leave the common exp to the
// compiler, which does not merge it when the combine branches around its exp.
struct thm3_merge { float m, d, alpha_a, alpha_b; };
__host__ __device__ inline thm3_merge thm3_merge_rows(float a_m, float a_d, float b_m, float b_d) {
    thm3_merge r;
    float m_again, d_again;
    thm3_combine_lane(a_m, a_d, 1.0f, b_m, b_d, 0.0f, r.m, r.d, r.alpha_a);
    thm3_combine_lane(a_m, a_d, 0.0f, b_m, b_d, 1.0f, m_again, d_again, r.alpha_b);
    return r;
}
__host__ __device__ inline float thm3_merge_lane(const thm3_merge& c, float a_o, float b_o) {
    return fmaf(b_o, c.alpha_b, a_o * c.alpha_a);
}

// ---- device primitives -----------------------------------------------------------------
// 2^x by the special-function unit alone (results below 2^-126 flush to 0, which a
// softmax weight can afford); exp2f would add the subnormal fix-up around it
__device__ __forceinline__ float thm3_exp2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}

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
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// two floats -> two bf16 in one register, `lo` in the low half (cvt puts its first
// source operand in the upper half)
__device__ __forceinline__ unsigned thm3_pack2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned short thm3_to_elem(float x) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}

// ---- shapes ----------------------------------------------------------------------------
#define THM3_DIM 128
#define THM3_WARPS 8
#define THM3_THREADS (32 * THM3_WARPS)
#define THM3_BLOCK_M 128
#define THM3_BLOCK_N 64
#define THM3_CAUSAL 0
#define THM3_LN2 0.693147180559945309f

typedef unsigned short thm3_elem;    // one bfloat16 input/output element (raw bits when 16-bit)

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

__device__ __forceinline__ void thm3_store(thm3_elem* p, float x) { *p = thm3_to_elem(x); }

// out = o / d and lse = m + log d (natural log); an empty row gives 0 and -inf, never NaN.
__device__ __forceinline__ float thm3_lse(float m, float d) {
    return d > 0.0f ? m + logf(d) : -INFINITY;
}
__device__ __forceinline__ float thm3_normalize(float o, float d) {
    return d > 0.0f ? o / d : 0.0f;
}

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
#pragma unroll
    for (int it = 0; it < ROWS * THM3_CHUNKS / THM3_THREADS; ++it) {
        const int i = threadIdx.x + it * THM3_THREADS;
        const int row = i / THM3_CHUNKS, chunk = i % THM3_CHUNKS;
        const bool inside = row0 + row < n;
        const thm3_elem* src = base + (size_t)(inside ? row0 + row : 0) * THM3_DIM + chunk * 8;
        thm3_cp_async16(tile + thm3_tile_offset(row, chunk), src, inside ? 16u : 0u);
    }
}

extern "C" __global__ void __launch_bounds__(THM3_THREADS)
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
#pragma unroll
            for (int j = 0; j < THM3_DIM / 8; ++j)
                dst[4 * j + t4] = thm3_pack2(thm3_normalize(o[j][2 * r], d_run[r]),
                                             thm3_normalize(o[j][2 * r + 1], d_run[r]));
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

// ---- second pass of split-K: merge the partial states of each row in split order -------
// One warp a row; lane l owns the columns l, l + 32, ...  Partials: o[split][row][DIM],
// m[split][row], d[split][row], rows = batch * heads * n_q.
extern "C" __global__ void __launch_bounds__(128)
thm3_attention_merge(const float* __restrict__ part_o, const float* __restrict__ part_m,
                     const float* __restrict__ part_d, thm3_elem* __restrict__ out,
                     float* __restrict__ lse, int rows, int num_splits) {
    const int row = blockIdx.x * 4 + (threadIdx.x >> 5);
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
#pragma unroll
    for (int i = 0; i < THM3_DIM / 32; ++i)
        thm3_store(out + (size_t)row * THM3_DIM + lane + 32 * i, thm3_normalize(o[i], d));
    if (lane == 0) lse[row] = thm3_lse(m, d);
}
