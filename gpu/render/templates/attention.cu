// thm3 FlashAttention forward: ${variant}.
// Rendered by gpu/render/attention.py from the derived combine; one query row is a left fold over
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
