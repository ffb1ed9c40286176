// thm3 kernels for `mps`: Maximum prefix sum
// Rendered by thm3 (gpu/render/cuda.py); Real is float.
// combine(a, b), with identity s = 0.0, m = 0.0:
//   s = a.s + b.s
//   m = max(a.m, a.s + b.m)

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
// 2^x for an x proved <= 0 (the stability certificate, of every exp argument in left and
// the combine): the special-function unit alone, results below 2^-126 flushed to 0
__host__ __device__ __forceinline__ float thm3_exp2_nonpositive(float x) {
#ifdef __CUDA_ARCH__
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else
    return exp2f(x);
#endif
}
template <class A, class B>
__host__ __device__ __forceinline__ auto thm3_max(A a, B b) -> decltype(a + b) { return (a > b || a != a) ? a : b; }
template <class A, class B>
__host__ __device__ __forceinline__ auto thm3_min(A a, B b) -> decltype(a + b) { return (a < b || a != a) ? a : b; }
template <class T> __host__ __device__ __forceinline__ T thm3_abs(T a) { return a < 0 ? -a : a; }
// thread t's share of `count` items in order, [t * per, (t + 1) * per) cut at count, for
// the one-block passes that combine the first pass's partials
__host__ __device__ __forceinline__ void thm3_thread_slice(int count, int threads, int t, int* begin, int* end) {
    const int per = (count + threads - 1) / threads;
    *begin = t * per;
    *end = *begin + per < count ? *begin + per : count;
}
template <class T> __host__ __device__ __forceinline__ T thm3_powi(T x, int n) {
    T r = 1;
    for (int k = 0; k < n; ++k) r *= x;
    return r;
}
#endif

#ifndef THM3_COVER
#define THM3_COVER
// 1 where left or the combine met an element or a state outside the proof over the reals
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__device__ int thm3_uncovered = 0;
#else
static int thm3_uncovered = 0;
#endif
// finite (a double by its high word's exponent bits: an integer test, no FP64 compare)
__host__ __device__ __forceinline__ bool thm3_finite(float v) { return isfinite(v); }
__host__ __device__ __forceinline__ bool thm3_finite(double v) {
#ifdef __CUDA_ARCH__
    return (__double2hiint(v) & 0x7ff00000) != 0x7ff00000;
#else
    return isfinite(v);
#endif
}
#endif

// The loop's state: its fields in declaration order.
struct State {
    float s;                    // sum so far
    float m;                    // best prefix sum
};
static_assert(sizeof(State) == 8, "State layout");

// identity: h of the empty list, the fields' defaults
__host__ __device__ __forceinline__ State thm3_identity() {
    State r;
    r.s = 0.0f;
    r.m = 0.0f;
    return r;
}

// covered: every Real field finite or at its identity value (the proof's reals)
__host__ __device__ __forceinline__ bool thm3_covered(const State& s) {
    bool ok = true;                 // & without short cuts: predicates, no branches
    { const float v = s.s; ok &= thm3_finite(v); }
    { const float v = s.m; ok &= thm3_finite(v); }
    return ok;
}

// left: one step of the sequential fold
__host__ __device__ __forceinline__ State thm3_left(const State& acc, float x) {
    State r;
    const float t0 = acc.s + x;
    r.s = t0;
    r.m = thm3_max(acc.m, t0);
    if (!thm3_finite(x)) thm3_uncovered = 1;     // outside the proof
    return r;
}

// combine: h(xs + ys) from a = h(xs) and b = h(ys); a is the earlier part
__host__ __device__ __forceinline__ State thm3_combine(const State& a, const State& b) {
    State r;
    r.s = a.s + b.s;
    r.m = thm3_max(a.m, a.s + b.m);
    if (!(thm3_covered(a) && thm3_covered(b) && thm3_covered(r))) thm3_uncovered = 1;
    return r;
}

// result: the loop's answer from the final state
__host__ __device__ __forceinline__ void thm3_result(const State& acc, float* out) {
    out[0] = acc.m;
}

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
#define THM3_BLOCK 256
#endif
#ifndef THM3_ITEMS
#define THM3_ITEMS 64
#endif
#define THM3_VECTOR 4
#ifndef THM3_FULL_TILES
#define THM3_FULL_TILES 0   // 1 only to read the fast path's machine code (gpu/runtime/sass.py)
#endif
#ifndef THM3_MIN_BLOCKS
#define THM3_MIN_BLOCKS 2
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
struct alignas(16) thm3_vec { float v[THM3_VECTOR]; };

__device__ __forceinline__ bool thm3_aligned(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

// A whole State down the warp, field by field in declaration order.
__device__ __forceinline__ State thm3_shfl_down(const State& s, int offset) {
    State r;
    r.s = __shfl_down_sync(0xffffffffu, s.s, offset);
    r.m = __shfl_down_sync(0xffffffffu, s.m, offset);
    return r;
}

// After the shuffles at offsets 1, 2, 4, ... < width, lane 0 holds the in-order combine of
// lanes [0, width): lane i combines its value (the left operand) with lane i + offset's.
__device__ __forceinline__ State thm3_warp_reduce(State s, int width) {
    for (int offset = 1; offset < width; offset <<= 1)
        s = thm3_combine(s, thm3_shfl_down(s, offset));
    return s;
}

// The warps' states (each valid in its lane 0) combined in warp order; valid in thread 0.
__device__ __forceinline__ State thm3_combine_warps(const State& mine) {
    __shared__ State warp_state[THM3_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_state[warp] = mine;
    __syncthreads();
    State s = thm3_identity();
    if (warp == 0)
        s = thm3_warp_reduce(lane < THM3_WARPS ? warp_state[lane] : thm3_identity(), THM3_WARPS);
    __syncthreads();                        // warp_state may be written again next call
    return s;
}

// h of the elements [0, count) of one range, the pointers at its start and `first` the
// position of its first element in the whole array; valid in thread 0.  Warp w takes the
// warp tiles [tiles * w / WARPS, tiles * (w + 1) / WARPS).
__device__ __forceinline__ State thm3_fold_tiles(const float* __restrict__ in_x, long long count,
                                                 long long first) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long tiles = (count + THM3_WARP_TILE - 1) / THM3_WARP_TILE;
    const long long tile_end = tiles * (warp + 1) / THM3_WARPS;
    const bool aligned = thm3_aligned(in_x);
    State running = thm3_identity();
    for (long long tile = tiles * warp / THM3_WARPS; tile < tile_end; ++tile) {
        const long long i0 = tile * THM3_WARP_TILE + (long long)lane * THM3_ITEMS;
        State s = thm3_identity();
        if (THM3_FULL_TILES || (aligned && i0 + THM3_ITEMS <= count)) {
            // a full run: 16-byte loads, all issued before the first step
            thm3_vec v_x[THM3_ITEMS / THM3_VECTOR];
            #pragma unroll
            for (int v = 0; v < THM3_ITEMS / THM3_VECTOR; ++v) {
                v_x[v] = reinterpret_cast<const thm3_vec*>(in_x + i0)[v];
            }
            #pragma unroll
            for (int k = 0; k < THM3_ITEMS; ++k) s = thm3_left(s, v_x[k / THM3_VECTOR].v[k % THM3_VECTOR]);
        } else {
            // the end of the range (or arrays off 16-byte alignment): one element at a time
            for (int k = 0; k < THM3_ITEMS; ++k) {
                const long long i = i0 + k;
                if (i < count) s = thm3_left(s, in_x[i]);
            }
        }
        s = thm3_warp_reduce(s, 32);
        running = thm3_combine(running, s);     // meaningful in lane 0
    }
    return thm3_combine_warps(running);
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
__device__ __forceinline__ State thm3_fold_range(const float* __restrict__ in_x, long long count,
                                                 long long first) {
    int head = thm3_head(in_x);
    const long long peeled = head < count ? head : count;
    State s = thm3_identity();
    if (threadIdx.x == 0)
        for (long long i = 0; i < peeled; ++i) s = thm3_left(s, in_x[i]);
    const State rest = thm3_fold_tiles(in_x + peeled, count - peeled, first + peeled);
    return peeled > 0 ? thm3_combine(s, rest) : rest;
}

// The final state of one reduction: its fields and its result, at position `row`.
__device__ __forceinline__ void thm3_store(const State& s, long long row,
                                           float* __restrict__ out_s, float* __restrict__ out_m,
                                           float* __restrict__ out_result) {
    out_s[row] = s.s;
    out_m[row] = s.m;
    thm3_result(s, out_result + row);
}

// Pass 1: block b reduces a contiguous range of warp tiles (ranges in block order)
// and writes its partial state.  (Launch bounds with a minimum of THM3_MIN_BLOCKS blocks,
// 1 or 2: a kernel that calls a subroutine, such as a division's slow path, is otherwise
// held to 80 registers, and float64 states spill; 2 holds the long float32 tiles of a
// multi-field State to 128 registers, two blocks a multiprocessor.)
extern "C" __global__ void __launch_bounds__(THM3_BLOCK, THM3_MIN_BLOCKS)
thm3_reduce_blocks(const float* __restrict__ in_x, long long n, State* __restrict__ partial) {
    const long long tiles = (n + THM3_WARP_TILE - 1) / THM3_WARP_TILE;
    const int b = blockIdx.x, grid = gridDim.x;
    // blocks [0, extra) take per + 1 tiles, the others per
    const long long thm3_per = thm3_div(tiles, grid), thm3_extra = tiles - thm3_per * grid;
    const long long begin = (b * thm3_per + (b < thm3_extra ? b : thm3_extra)) * THM3_WARP_TILE;
    const long long end_tile = begin + (thm3_per + (b < thm3_extra ? 1 : 0)) * THM3_WARP_TILE;
    const long long end = end_tile < n ? end_tile : n;
    const long long count = begin < end ? end - begin : 0;
    const State s = thm3_fold_range(in_x + begin, count, begin);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Pass 2, one block: thread t combines the partials [t * per, (t + 1) * per) in order,
// then the block combines the threads in order; stores the state and the result.
extern "C" __global__ void __launch_bounds__(THM3_BLOCK)
thm3_reduce_partials(const State* __restrict__ partial, int count, float* __restrict__ out_s,
                     float* __restrict__ out_m, float* __restrict__ out_result) {
    int begin, end;
    thm3_thread_slice(count, THM3_BLOCK, threadIdx.x, &begin, &end);
    State s = thm3_identity();
    for (int j = begin; j < end; ++j) s = thm3_combine(s, partial[j]);
    s = thm3_combine_warps(thm3_warp_reduce(s, 32));
    if (threadIdx.x == 0) thm3_store(s, 0, out_s, out_m, out_result);
}

// One reduction per row of a (rows, n) input, one block per row (Index: the position in
// the row).  The 16-byte loads need each row at a 16-byte boundary (n * sizeof a multiple
// of 16); other rows take the scalar path.
extern "C" __global__ void __launch_bounds__(THM3_BLOCK, THM3_MIN_BLOCKS)
thm3_reduce_rows(const float* __restrict__ in_x, long long n, float* __restrict__ out_s,
                 float* __restrict__ out_m, float* __restrict__ out_result) {
    const long long row = blockIdx.x;
    const State s = thm3_fold_range(in_x + row * n, n, 0);
    if (threadIdx.x == 0) thm3_store(s, row, out_s, out_m, out_result);
}
