
// ---- forward, tensor cores (mma.sync m16n8k16, fp32 accumulate) -------------------------
// A block of THM3_WARPS warps owns THM3_BLOCK_M = 16 * THM3_WARPS queries, warp w the rows
// 16w..16w+15, and walks its K/V tiles of THM3_BLOCK_N keys, double-buffered in shared
// memory by cp.async.  Per tile, each warp: S = Q K^T (Q and K by ldmatrix from shared memory,
// as A and B fragments), t = fl(S c), mt = row max of t, p = exp2(t - mt), the
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

// The address of 16-byte chunk 2 kk + c of a tile row, from lane_addr = tile +
// thm3_tile_offset(row, c), c = 0 or 1.  The swizzle's XOR commutes with kk's part of the
// chunk: (2 kk + c) ^ (row % 8) = ((c ^ (row % 8)) ^ 2 (kk % 4)) + 8 (kk / 4), so the address
// is lane_addr with bits 5-6 XORed by kk % 4 (the tiles start 128-byte aligned, so adding
// the base leaves those bits as the offset has them) plus 128 (kk / 4).  One register a
// lane then serves every k-step; one address a k-step, held across the tile loop, took
// 3 DIM / 16 registers, and NVRTC 12.6 spilled at D = 64.
__device__ __forceinline__ unsigned thm3_step(unsigned lane_addr, int kk) {
    return (lane_addr ^ (unsigned)((kk & 3) << 5)) + (unsigned)((kk >> 2) << 7);
}

// Rows [row0, row0 + ROWS) of an (n, DIM) matrix into a tile; rows >= n become zeros.
// (With few warps a thread issues many copies a tile; unrolled, their addresses would be
// hoisted out of the tile loop into registers and spill, so that loop stays rolled:
// bench/results/sass-*, tests/test_sass.py.  D = 64 with 4 or 8 warps reached the 128
// registers of its budget, D = 128 over 200.)
template <int ROWS>
__device__ __forceinline__ void thm3_load_tile(unsigned tile, const thm3_elem* base, int row0, int n) {
#pragma unroll 1
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
    if (tiles.begin < tiles.end) {
        thm3_load_tile<THM3_BLOCK_M>(s_q, qb, q0, n_q);
        thm3_load_tile<THM3_BLOCK_N>(s_k, kb, tiles.begin * THM3_BLOCK_N, n_kv);
        thm3_load_tile<THM3_BLOCK_N>(s_v, vb, tiles.begin * THM3_BLOCK_N, n_kv);
        thm3_cp_async_commit();
        thm3_cp_async_wait<0>();
        __syncthreads();
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
        // This lane's ldmatrix rows at k-step 0 (thm3_step gives the others).  Q: lanes 0-15
        // address rows 0-15 of the warp's 16 at columns 16kk..16kk+7 (matrices 0, 1 = a[0],
        // a[1]), lanes 16-31 the same rows at columns 16kk+8.. (matrices 2, 3 = a[2], a[3]).
        // K: matrix lane / 8 holds keys (0..7 | 8..15) by its bit 1 and columns (0..7 |
        // 8..15) by its bit 0; V (transposed) the other way round.
        const int tid = thm3_tid_now(), ln = tid & 31;
        const unsigned q_lane = s_q + thm3_tile_offset((tid >> 5) * 16 + (ln & 15), ln >> 4);
        const unsigned k_lane = s_kt + thm3_tile_offset((ln & 7) + ((ln >> 4) << 3), (ln >> 3) & 1);
        const unsigned v_lane = s_vt + thm3_tile_offset((ln & 7) + (((ln >> 3) & 1) << 3), ln >> 4);

        // S = Q K^T: s[j] is the C fragment of keys 8j..8j+7 of the tile.  B[kd][n] =
        // K[n][kd] is K read row by row: ldmatrix (no .trans) of keys 16jj + (0..7 | 8..15)
        // at columns 16kk + (0..7 | 8..15) gives b0, b1 of keys 16jj.. and of keys 16jj+8..
        float s[THM3_BLOCK_N / 8][4];
#pragma unroll
        for (int j = 0; j < THM3_BLOCK_N / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < THM3_DIM / 16; ++kk) {
            // Q's A fragment of this k-step, read from the Q tile (which stays in shared
            // memory) each tile rather than held in registers across the tile loop: those
            // DIM / 4 registers go to S and O instead.
            unsigned qf[4];
            thm3_ldmatrix_x4(thm3_step(q_lane, kk), qf[0], qf[1], qf[2], qf[3]);
#pragma unroll
            for (int jj = 0; jj < THM3_BLOCK_N / 16; ++jj) {
                unsigned b0, b1, b2, b3;        // keys 16jj.. are 16jj rows further on
                thm3_ldmatrix_x4(thm3_step(k_lane, kk) + 16 * jj * (THM3_DIM * 2), b0, b1, b2, b3);
                thm3_mma(s[2 * jj], qf, b0, b1);
                thm3_mma(s[2 * jj + 1], qf, b2, b3);
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
                unsigned b0, b1, b2, b3;        // keys 16kk.. are 16kk rows further on
                thm3_ldmatrix_x4_trans(thm3_step(v_lane, dd) + 16 * kk * (THM3_DIM * 2), b0, b1, b2, b3);
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
