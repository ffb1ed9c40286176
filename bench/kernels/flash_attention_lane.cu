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
