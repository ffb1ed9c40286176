
__device__ __forceinline__ unsigned thm3_smem_addr(const void* p) {
    unsigned r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}
// threadIdx.x read afresh: volatile, so never merged with an earlier read nor hoisted out
// of a loop.  The forward kernel rebuilds its lane's ldmatrix addresses from it each tile
// (a few integer operations) rather than hold them across the tile loop, where ptxas would
// park such long-lived values on the stack.
__device__ __forceinline__ int thm3_tid_now() {
    unsigned tid;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
    return (int)tid;
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
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.${elem}.${elem}.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// two floats -> two ${elem} in one register, `lo` in the low half (cvt puts its first
// source operand in the upper half)
__device__ __forceinline__ unsigned thm3_pack2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.${elem}x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned short thm3_to_elem(float x) {
    unsigned short r;
    asm("cvt.rn.${elem}.f32 %0, %1;\n" : "=h"(r) : "f"(x));
    return r;
}
