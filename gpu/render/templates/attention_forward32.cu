
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
