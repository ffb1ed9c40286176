#ifndef THM3_INT_CHECKS
#define THM3_INT_CHECKS
// Int arithmetic in int64, checked: each helper computes in two's complement (no undefined
// behaviour) and, where the exact value leaves int64, stores `field` (1 + the index of the
// field whose new value reads it) in thm3_int_overflow, which the launcher reads after
// the launch to raise OverflowError instead of returning a wrapped value.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
__device__ int thm3_int_overflow = 0;
#else
static int thm3_int_overflow = 0;
#endif
#define THM3_LL_MIN (-9223372036854775807LL - 1)
__host__ __device__ __forceinline__ long long thm3_add_ll(long long a, long long b, int field) {
    const long long r = (long long)((unsigned long long)a + (unsigned long long)b);
    if (((a ^ r) & (b ^ r)) < 0) thm3_int_overflow = field;
    return r;
}
__host__ __device__ __forceinline__ long long thm3_sub_ll(long long a, long long b, int field) {
    const long long r = (long long)((unsigned long long)a - (unsigned long long)b);
    if (((a ^ b) & (a ^ r)) < 0) thm3_int_overflow = field;
    return r;
}
__host__ __device__ __forceinline__ long long thm3_mul_ll(long long a, long long b, int field) {
    // the product fits in int64 exactly where its high 64 bits are the low word's sign:
    // no 64-bit division (a call on the GPU, which spilled the partials kernel)
    const long long r = (long long)((unsigned long long)a * (unsigned long long)b);
#if defined(__CUDA_ARCH__)
    const long long hi = __mul64hi(a, b);
#else
    const long long hi = (long long)(((__int128)a * (__int128)b) >> 64);
#endif
    if (hi != (r >> 63)) thm3_int_overflow = field;
    return r;
}
__host__ __device__ __forceinline__ long long thm3_neg_ll(long long a, int field) {
    if (a == THM3_LL_MIN) thm3_int_overflow = field;
    return (long long)(0ULL - (unsigned long long)a);
}
__host__ __device__ __forceinline__ long long thm3_abs_ll(long long a, int field) {
    return a < 0 ? thm3_neg_ll(a, field) : a;
}
__host__ __device__ __forceinline__ long long thm3_powi_ll(long long x, int n, int field) {
    long long r = 1;
    for (int k = 0; k < n; ++k) r = thm3_mul_ll(r, x, field);
    return r;
}
#endif
