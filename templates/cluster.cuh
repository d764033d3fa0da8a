// Thread-block clusters (sm_90): a block's rank in its cluster, the cluster-wide barrier, and 16-byte reads of
// another block's shared memory (distributed shared memory), for a reduction that stays on chip (the K split of
// templates/skinny.cu with CL > 1). The launch asks for the cluster (its family's launch hook, kernels/family.h).
// Compiled with skinny.cu (tests/test_skinny.c); the CPU emulator, which runs one block at a time, never includes
// it.
#ifndef GT_CLUSTER_CUH
#define GT_CLUSTER_CUH

// This block's rank in its cluster: 0 .. the cluster's blocks - 1.
__device__ __forceinline__ unsigned gt_cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// The blocks of this block's cluster (1 in a launch without clusters).
__device__ __forceinline__ unsigned gt_cluster_size()
{
    unsigned n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
    return n;
}

// Every thread of every block of the cluster arrives and waits: shared-memory writes before it (release) are seen
// by reads after it in any block of the cluster (acquire). Every thread of each block must reach it.
__device__ __forceinline__ void gt_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}

// The four floats at shared-window address addr of this block, read from the block of the given rank instead.
__device__ __forceinline__ float4 gt_cluster_ld4(unsigned addr, unsigned rank)
{
    unsigned remote;
    float4 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote)
                 : "memory");
    return v;
}

#endif
