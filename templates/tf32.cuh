// TF32 on tensor cores for the 3xTF32 families (tf32x3.cu: mma.sync, tf32x3wg.cu: wgmma): the rounding to TF32,
// the split of an FP32 value into two TF32 parts, and the m16n8k8 MMA. The design and its measurements:
// docs/BENCHMARKS.md, "3xTF32 study". Compiled with those templates (tests/test_tf32x3.c, tests/test_tf32x3wg.c).
#ifndef GT_TF32_CUH
#define GT_TF32_CUH

// x rounded to TF32 (as FP32 bits). sm_90 has a one-instruction round to nearest (the study measured it +25% over
// cvt.rna, which ptxas emulates there); earlier GPUs only have cvt.rna, of the same accuracy. Inf stays Inf and NaN
// NaN. Values within half a TF32 ulp of FLT_MAX round to Inf, so their small part and the result are NaN.
__device__ __forceinline__ unsigned gt_tf32_round(float x)
{
    unsigned r;
#if __CUDA_ARCH__ >= 900
    asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#else
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#endif
    return r;
}

// x = big + small up to small's rounding: x - big is exact in FP32, as big is x rounded to 11 significant bits.
__device__ __forceinline__ void gt_tf32_split(float x, unsigned &big, unsigned &small)
{
    big = gt_tf32_round(x);
    small = gt_tf32_round(x - __uint_as_float(big));
}

// d += a * b on one 16x8x8 tile. a: (g,t) (g+8,t) (g,t+4) (g+8,t+4); b: (k=t,n=g) (k=t+4,n=g);
// d: (g,2t) (g,2t+1) (g+8,2t) (g+8,2t+1), with g = lane/4, t = lane%4 (PTX ISA, mma.m16n8k8 .tf32).
__device__ __forceinline__ void gt_mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif
