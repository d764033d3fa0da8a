// Stream-K's schedule (a hybrid with data-parallel tiles), for a family whose persistent grid of G blocks shares
// out the MAC loop: of the T tiles of C, the first `skt` (in raster order) are cut into MAC-loop iterations (I K
// tiles per tile), and their skt * I iterations into G contiguous, equal ranges, one per block, so every block does
// the same work whatever T is. The other T - skt tiles are data-parallel, block c taking tiles skt + c,
// skt + c + G, ...; skt is T when T < 2G (and T % G != 0), G + T % G above that, 0 when T % G == 0, as a
// data-parallel wave of whole tiles costs no fix-up. A block's range holds at most two partial tiles (where it
// starts, where it ends): each goes to one of the block's two workspace slots, after the tiles' counters
// (GT_SK_COUNTERS floats), and the fix-up adds a tile's parts in block order, so C is the same bits from run to run.
// The launch computes the same numbers (kernels/family.c: gt_launch_stream_k). Used by tf32x3wg.cu; multistage.cu
// keeps the same schedule written out in its own text (its kernels' ids hash it).
#ifndef GT_STREAMK_CUH
#define GT_STREAMK_CUH

#define GT_SK_COUNTERS(T) (((T) + 63) / 64 * 64) // floats before the slots: the counters, padded to 256 bytes

struct gt_sk {
    int T, I, G, skt, W; // tiles, K tiles per tile, blocks, tiles shared out, their iterations (under 2^31)
};

__device__ __forceinline__ gt_sk gt_sk_plan(int T, int I)
{
    gt_sk s;
    s.T = T, s.I = I, s.G = gridDim.x;
    s.skt = T % s.G == 0 ? 0 : T < 2 * s.G ? T : s.G + T % s.G;
    s.W = s.skt * I;
    return s;
}

// The first iteration of block c's range (the end of block c - 1's).
__device__ __forceinline__ int gt_sk_start(const gt_sk &s, int c) { return (int)((long long)s.W * c / s.G); }

// The block whose range holds iteration x.
__device__ __forceinline__ int gt_sk_owner(const gt_sk &s, int x)
{
    return (int)(((long long)(x + 1) * s.G + s.W - 1) / s.W - 1);
}

// Block o's slot for its part of tile t: 0 where t is the tile its range starts in, else 1.
__device__ __forceinline__ int gt_sk_slot(const gt_sk &s, int o, int t) { return gt_sk_start(s, o) / s.I == t ? 0 : 1; }

// Counts the block in on tile t's counter once its part is written (every thread's stores visible first): 1 in
// every thread of the block that came last of the tile's `blocks`, the other parts then visible to it. No waiting.
__device__ __forceinline__ int gt_sk_arrive(unsigned *cnt, int t, int blocks)
{
    __shared__ int last;
    __threadfence(); // the part is visible before the count
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&cnt[t], 1u) == (unsigned)(blocks - 1);
    __syncthreads();
    if (!last) return 0;
    __threadfence();
    return 1;
}

// The next piece of work of a block: tile t, its K tiles [kb, ke). it/end: what is left of the block's range; dpt:
// its next data-parallel tile. 0 when there is none left.
__device__ __forceinline__ int gt_sk_next(const gt_sk &s, int &it, int end, int &dpt, int &t, int &kb, int &ke)
{
    if (it < end) {
        t = it / s.I, kb = it % s.I, ke = min(s.I, kb + (end - it));
        it += ke - kb;
        return 1;
    }
    if (dpt >= s.T) return 0;
    t = dpt, kb = 0, ke = s.I;
    dpt += s.G;
    return 1;
}

#endif
