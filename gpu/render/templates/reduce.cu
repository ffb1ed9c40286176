// ---- the reduction, in list order ---------------------------------------------------
// Element i is the left operand's side of every combine that joins it with element i + 1:
//  - a warp tile is 32 * THM3_ITEMS consecutive elements; lane l folds elements
//    [l * THM3_ITEMS, (l + 1) * THM3_ITEMS) of it with left, from the identity;
//  - the warp combines its 32 runs with shuffles at offsets 1, 2, 4, 8, 16, the lower
//    lane always the left operand, so lane 0 holds the tile's state;
//  - each warp carries a running state over a contiguous range of warp tiles, and the
//    warps of a block are combined in order through shared memory;
//  - each block reduces a contiguous range and writes one partial State; a second launch
//    combines the partials in order.  No atomics: the result is deterministic.
#ifndef THM3_BLOCK
#define THM3_BLOCK ${block}
#endif
#ifndef THM3_ITEMS
#define THM3_ITEMS ${items}
#endif
#define THM3_VECTOR ${vector}
#ifndef THM3_FULL_TILES
#define THM3_FULL_TILES 0   // 1 only to read the fast path's machine code (gpu/runtime/sass.py)
#endif
#ifndef THM3_MIN_BLOCKS
#define THM3_MIN_BLOCKS ${min_blocks}
#endif
#define THM3_WARPS (THM3_BLOCK / 32)
#define THM3_WARP_TILE (32 * THM3_ITEMS)
static_assert(THM3_BLOCK >= 32 && THM3_BLOCK <= 1024 && (THM3_BLOCK & (THM3_BLOCK - 1)) == 0,
              "THM3_BLOCK: a power of two from 32 to 1024");
static_assert(THM3_ITEMS % THM3_VECTOR == 0, "THM3_ITEMS: a multiple of the vector width");

// a / b for 0 <= a < 2^53, 0 < b, without a 64-bit integer division: its subroutine call
// would cap the kernel at 64 registers and spill float64 states.  A double estimate, off
// by at most a few units, corrected with integer arithmetic.
__device__ __forceinline__ long long thm3_div(long long a, int b) {
    long long q = (long long)((double)a * __drcp_rn((double)b));
    long long r = a - q * b;
    while (r < 0) { --q; r += b; }
    while (r >= b) { ++q; r -= b; }
    return q;
}

// 16 bytes of Reals, for vectorised loads.
struct alignas(16) thm3_vec { ${real} v[THM3_VECTOR]; };

__device__ __forceinline__ bool thm3_aligned(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// A whole State down the warp, field by field in declaration order.
__device__ __forceinline__ State thm3_shfl_down(const State& s, int offset) {
    State r;
${shuffle}
    return r;
}

// After the shuffles at offsets 1, 2, 4, ... < width, lane 0 holds the in-order combine of
// lanes [0, width): lane i combines its value (the left operand) with lane i + offset's.
__device__ __forceinline__ State thm3_warp_reduce(State s, int width${params_decl}) {
    for (int offset = 1; offset < width; offset <<= 1)
        s = thm3_combine(s, thm3_shfl_down(s, offset)${params});
    return s;
}

// The warps' states (each valid in its lane 0) combined in warp order; valid in thread 0.
__device__ __forceinline__ State thm3_combine_warps(const State& mine${params_decl}) {
    __shared__ State warp_state[THM3_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_state[warp] = mine;
    __syncthreads();
    State s = thm3_identity();
    if (warp == 0)
        s = thm3_warp_reduce(lane < THM3_WARPS ? warp_state[lane] : thm3_identity(), THM3_WARPS${params});
    __syncthreads();                        // warp_state may be written again next call
    return s;
}

// h of the elements [0, count) of one range, the pointers at its start and `first` the
// position of its first element in the whole array; valid in thread 0.  Warp w takes the
// warp tiles [tiles * w / WARPS, tiles * (w + 1) / WARPS).
${sig_tiles} {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long tiles = (count + THM3_WARP_TILE - 1) / THM3_WARP_TILE;
    const long long tile_end = tiles * (warp + 1) / THM3_WARPS;
    const bool aligned = ${aligned};
    State running = thm3_identity();
    for (long long tile = tiles * warp / THM3_WARPS; tile < tile_end; ++tile) {
        const long long i0 = tile * THM3_WARP_TILE + (long long)lane * THM3_ITEMS;
        State s = thm3_identity();
        if (THM3_FULL_TILES || (aligned && i0 + THM3_ITEMS <= count)) {
${fold_full}
        } else {
            // the end of the range (or arrays off 16-byte alignment): one element at a time
            for (int k = 0; k < THM3_ITEMS; ++k) {
                const long long i = i0 + k;
                if (i < count) s = thm3_left(${left_scalar}${params});
            }
        }
        s = thm3_warp_reduce(s, 32${params});
        running = thm3_combine(running, s${params});     // meaningful in lane 0
    }
    return thm3_combine_warps(running${params});
}

// Elements before p's next 16-byte boundary (0 when p is on one or is not T-aligned).
template <class T> __device__ __forceinline__ int thm3_head(const T* p) {
    const unsigned off = (unsigned)(reinterpret_cast<unsigned long long>(p) & 15);
    return off % sizeof(T) ? 0 : (int)((16 - off) % 16 / sizeof(T));
}

// The range with a peeled head: when every array sits the same number of elements before
// a 16-byte boundary (a contiguous x[1:], say), thread 0 folds those first elements one at
// a time and the tiles start at the boundary, where they take the 16-byte loads; the head
// is the earlier part of the combine.  Valid in thread 0.
${sig_fold} {
${peel}
}

// The final state of one reduction: its fields and its result, at position `row`.
${sig_store} {
${store}
}

// Pass 1: block b reduces a contiguous range of warp tiles (ranges in block order)
// and writes its partial state.  (Launch bounds with a minimum of THM3_MIN_BLOCKS blocks,
// 1 or 2: a kernel that calls a subroutine, such as a division's slow path, is otherwise
// held to 80 registers, and float64 states spill; 2 holds the long float32 tiles of a
// multi-field State to 128 registers, two blocks a multiprocessor.)
extern "C" __global__ void __launch_bounds__(THM3_BLOCK, THM3_MIN_BLOCKS)
${sig_blocks} {
    const long long tiles = (n + THM3_WARP_TILE - 1) / THM3_WARP_TILE;
    const int b = blockIdx.x, grid = gridDim.x;
    // blocks [0, extra) take per + 1 tiles, the others per
    const long long thm3_per = thm3_div(tiles, grid), thm3_extra = tiles - thm3_per * grid;
    const long long begin = (b * thm3_per + (b < thm3_extra ? b : thm3_extra)) * THM3_WARP_TILE;
    const long long end_tile = begin + (thm3_per + (b < thm3_extra ? 1 : 0)) * THM3_WARP_TILE;
    const long long end = end_tile < n ? end_tile : n;
    const long long count = begin < end ? end - begin : 0;
    const State s = thm3_fold_range(${range_begin}, count, begin${params});
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Pass 2, one block: thread t combines the partials [t * per, (t + 1) * per) in order,
// then the block combines the threads in order; stores the state and the result.
extern "C" __global__ void __launch_bounds__(THM3_BLOCK)
${sig_partials} {
    int begin, end;
    thm3_thread_slice(count, THM3_BLOCK, threadIdx.x, &begin, &end);
    State s = thm3_identity();
    for (int j = begin; j < end; ++j) s = thm3_combine(s, partial[j]${params});
    s = thm3_combine_warps(thm3_warp_reduce(s, 32${params})${params});
    if (threadIdx.x == 0) thm3_store(s, 0${params}${outputs});
}

// One reduction per row of a (rows, n) input, one block per row (Index: the position in
// the row).  The 16-byte loads need each row at a 16-byte boundary (n * sizeof a multiple
// of 16); other rows take the scalar path.
extern "C" __global__ void __launch_bounds__(THM3_BLOCK, THM3_MIN_BLOCKS)
${sig_rows} {
    const long long row = blockIdx.x;
    const State s = thm3_fold_range(${range_row}, n, 0${params});
    if (threadIdx.x == 0) thm3_store(s, row${params}${outputs});
}
