// ---- the inclusive scan, in list order (gpu/render/scan.py) ----------------------------
#define THM3_SCAN_BLOCK ${block}
#define THM3_SCAN_ITEMS ${items}
#define THM3_SCAN_TILE ((long long)THM3_SCAN_BLOCK * THM3_SCAN_ITEMS)

// State s at position i of the outputs, one array a field (THM3_DIM values for a Vec).
${sig_put} {
${put}
}

// The exclusive prefix of this thread's state among the block's, in thread order; the
// block's total in *total.  Every thread of the block calls it.
__device__ State thm3_block_exclusive(const State& thm3_mine, State* thm3_total${params_decl}) {
    __shared__ State thm3_scan_state[THM3_SCAN_BLOCK];
    const int thm3_t = threadIdx.x;
    thm3_scan_state[thm3_t] = thm3_mine;
    __syncthreads();
    for (int thm3_offset = 1; thm3_offset < THM3_SCAN_BLOCK; thm3_offset <<= 1) {
        State thm3_v = thm3_scan_state[thm3_t];
        if (thm3_t >= thm3_offset) thm3_v = thm3_combine(thm3_scan_state[thm3_t - thm3_offset], thm3_v${params});
        __syncthreads();
        thm3_scan_state[thm3_t] = thm3_v;
        __syncthreads();
    }
    *thm3_total = thm3_scan_state[THM3_SCAN_BLOCK - 1];
    const State thm3_ex = thm3_t > 0 ? thm3_scan_state[thm3_t - 1] : thm3_identity();
    __syncthreads();                        // thm3_scan_state may be written again next call
    return thm3_ex;
}

// Elements [base, base + count) of one array (count <= a tile), `carry` the state before
// them: with `write`, every state into the outputs; returns carry combined with the tile.
${sig_tile} {
    const long long thm3_i0 = (long long)threadIdx.x * THM3_SCAN_ITEMS;
    State thm3_s = thm3_identity();
    for (int thm3_k = 0; thm3_k < THM3_SCAN_ITEMS; ++thm3_k) {
        const long long thm3_i = thm3_base + thm3_i0 + thm3_k;
        if (thm3_i0 + thm3_k < thm3_count) thm3_s = thm3_left(${left}${params});
    }
    State thm3_total;
    const State thm3_ex = thm3_block_exclusive(thm3_s, &thm3_total${params});
    if (thm3_write) {
        thm3_s = thm3_combine(thm3_carry, thm3_ex${params});
        for (int thm3_k = 0; thm3_k < THM3_SCAN_ITEMS; ++thm3_k) {
            const long long thm3_i = thm3_base + thm3_i0 + thm3_k;
            if (thm3_i0 + thm3_k < thm3_count) {
                thm3_s = thm3_left(${left}${params});
                thm3_put(thm3_s, thm3_i${outputs});
            }
        }
    }
    return thm3_combine(thm3_carry, thm3_total${params});
}

// Block b's range of tiles: [tiles * b / grid, tiles * (b + 1) / grid).
__device__ __forceinline__ void thm3_scan_range(long long thm3_n, long long* thm3_t0, long long* thm3_t1) {
    const long long thm3_tiles = (thm3_n + THM3_SCAN_TILE - 1) / THM3_SCAN_TILE;
    *thm3_t0 = thm3_tiles * blockIdx.x / gridDim.x;
    *thm3_t1 = thm3_tiles * (blockIdx.x + 1) / gridDim.x;
}

// Pass 1: block b's state over its tiles.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_blocks} {
    long long thm3_t0, thm3_t1;
    thm3_scan_range(thm3_n, &thm3_t0, &thm3_t1);
    State thm3_carry = thm3_identity();
    for (long long thm3_tile = thm3_t0; thm3_tile < thm3_t1; ++thm3_tile) {
        const long long thm3_base = thm3_tile * THM3_SCAN_TILE;
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, false${arrays}${params}${null_outputs});
    }
    if (threadIdx.x == 0) thm3_partial[blockIdx.x] = thm3_carry;
}

// Pass 2, one block: partial[j] becomes the combine of partials 0 .. j-1, in order.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_partials} {
    int thm3_begin, thm3_end;
    thm3_thread_slice(thm3_count, THM3_SCAN_BLOCK, threadIdx.x, &thm3_begin, &thm3_end);
    State thm3_s = thm3_identity();
    for (int thm3_j = thm3_begin; thm3_j < thm3_end; ++thm3_j) thm3_s = thm3_combine(thm3_s, thm3_partial[thm3_j]${params});
    State thm3_total;
    thm3_s = thm3_block_exclusive(thm3_s, &thm3_total${params});
    for (int thm3_j = thm3_begin; thm3_j < thm3_end; ++thm3_j) {
        const State thm3_v = thm3_partial[thm3_j];
        thm3_partial[thm3_j] = thm3_s;
        thm3_s = thm3_combine(thm3_s, thm3_v${params});
    }
}

// Pass 3: block b scans its tiles from its prefix, writing every state.
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_down} {
    long long thm3_t0, thm3_t1;
    thm3_scan_range(thm3_n, &thm3_t0, &thm3_t1);
    State thm3_carry = thm3_partial[blockIdx.x];
    for (long long thm3_tile = thm3_t0; thm3_tile < thm3_t1; ++thm3_tile) {
        const long long thm3_base = thm3_tile * THM3_SCAN_TILE;
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, true${arrays}${params}${outputs});
    }
}

// One scan per row of (rows, n) inputs, one block a row (Index: the position in the row).
extern "C" __global__ void __launch_bounds__(THM3_SCAN_BLOCK)
${sig_rows} {
    const long long thm3_row = blockIdx.x;
    State thm3_carry = thm3_identity();
    for (long long thm3_base = 0; thm3_base < thm3_n; thm3_base += THM3_SCAN_TILE) {
        const long long thm3_count = thm3_n - thm3_base < THM3_SCAN_TILE ? thm3_n - thm3_base : THM3_SCAN_TILE;
        thm3_carry = thm3_scan_tile(thm3_carry, thm3_base, thm3_count, true${row_arrays}${params}${row_outputs});
    }
}
