// Block rasterization: which tile of C a block computes, in an order that keeps the A and B panels of the blocks in
// flight in L2. One knob, GROUP, that each family names its own way (RASTER in multistage and the tf32x3
// families, SWZ in warptile). Compiled with those templates (tests/test_nvrtc.c and each family's tests).
#ifndef GT_RASTER_CUH
#define GT_RASTER_CUH

// Tile (*m0 / TBM, *n0 / TBN) of the tiles_m x tiles_n tiles of C from the linear index lin: groups of GROUP tile
// rows walked column by column (the last group may be shorter); GROUP 1 is row-major order. TBM and TBN scale the
// tile's coordinates to where it starts in C (1: the tile's index). Written as the families had it, whose SASS
// follows the order of these operations.
template <int GROUP, int TBM = 1, int TBN = 1>
__device__ __forceinline__ void gt_raster(int lin, int tiles_m, int tiles_n, int *m0, int *n0)
{
    static_assert(GROUP >= 1, "GROUP: tile rows per group, >= 1");
    if constexpr (GROUP > 1) {
        const int per_group = GROUP * tiles_n, first = lin / per_group * GROUP;
        const int rows = min(tiles_m - first, GROUP), in = lin % per_group;
        *m0 = (first + in % rows) * TBM;
        *n0 = in / rows * TBN;
    } else {
        (void)tiles_m;
        const int tm = lin / tiles_n, tn = lin % tiles_n;
        *m0 = tm * TBM;
        *n0 = tn * TBN;
    }
}

// Where the block's TBM x TBN tile of C starts (row *bm0, column *bn0), from the linear block index lin.
template <int TBM, int TBN, int GROUP>
__device__ __forceinline__ void gt_tile_origin(int lin, int M, int N, int *bm0, int *bn0)
{
    gt_raster<GROUP, TBM, TBN>(lin, (M + TBM - 1) / TBM, (N + TBN - 1) / TBN, bm0, bn0);
}

#endif
