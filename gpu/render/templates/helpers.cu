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