
// 2^x by the special-function unit alone (results below 2^-126 flush to 0, which a
// softmax weight can afford); exp2f would add the subnormal fix-up around it
__device__ __forceinline__ float thm3_exp2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
    return r;
}
