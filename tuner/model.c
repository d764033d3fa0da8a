/* The tuner's cost model (see model.h). Rates per SM and clock of an sm_80/sm_90-class GPU; a sweep only compares
 * predictions of one family with each other and calibrates them on the family's measured times, so the rates set
 * the balance between the terms, not the figure it finally trusts:
 *
 *   blocks on the busiest SM     b = ceil(blocks / SMs), of which min(b, r) run together (r: what threads,
 *                                    registers and shared memory let one SM hold)
 *   that SM's time               b x max(FMAs / (FMA rate x family's rate x issue share x warp share),
 *                                        operand bytes / L2 rate)
 *   kernel                       max(that, DRAM bytes / DRAM rate) + launches
 *
 * The issue share is what a thread tile of t results leaves the FMAs among its shared-memory loads (a t-result
 * tile reads about 2 sqrt(t) floats per k, four to a load) and its loop; the warp share, how busy the warps that
 * run together keep the SM; the family's rate (gt_work's, 1 unless its work hook says), what its products reach of
 * the FMA rate (tf32x3wg: a narrow wgmma less than a wide one). Padded tiles count whole, so edge tiles and the last
 * wave cost what they do on the GPU. Fitted by eye on an H100's screens of eight shapes (docs/BENCHMARKS.md,
 * "compile less"): it orders tiles and splits, not the params it does not see (pipeline depth, rasterization), which
 * the sweep's neighbour search settles. Tested by tests/test_model.c. */
#include "model.h"

#include <math.h>

enum { FMA_PER_CLK = 128, L2_BYTES_PER_CLK = 32 };
static const double dram_bytes_per_clk_sm = 13.0; /* ~3 TB/s over 132 SMs at ~1.7 GHz */
static const double clock_hz = 1.7e9;
static const double launch_s = 3e-6; /* a launch's fixed cost; split-K's reduce is a second one */

static double blocks_of(const gt_launch *L) { return (double)L->grid[0] * L->grid[1] * (L->grid[2] ? L->grid[2] : 1); }

/* Blocks of L (with w's registers) that one SM holds at once; at least one. */
static int resident(const gt_launch *L, const gt_work *w, const gt_limits *lim)
{
    return gt_blocks_per_sm((int)(L->block[0] * L->block[1] * L->block[2]), w->regs, (long)L->smem, lim);
}

/* The share of issue slots a thread's FMAs get beside its loads and loop, for t results per thread. */
static double issue_share(double t)
{
    return t / (t + sqrt(t) / 2 + 2);
}

/* The share of an SM's FMA rate that w warps running together keep busy (latency hidden by the others). */
static double warp_share(double w)
{
    return w / (w + 0.25);
}

double gt_model_time(const gt_family *f, const gt_params *p, const gt_shape *s, const gt_limits *lim)
{
    gt_launch L;
    gt_work w;
    if (f->build != GT_BUILD_NVRTC || !gt_family_launch(f, p, s, lim->sm_count, &L)) return 0;
    gt_family_work(f, p, s, &L, &w);
    const double sms = lim->sm_count > 0 ? lim->sm_count : 1, blocks = blocks_of(&L);
    const double threads = (double)L.block[0] * L.block[1] * L.block[2];
    if (blocks <= 0 || threads <= 0 || w.tile_m <= 0 || w.tile_n <= 0) return 0;
    const double batch = gt_shape_batch(s);
    const double padded = (double)gt_cdiv(s->m, w.tile_m) * w.tile_m * gt_cdiv(s->n, w.tile_n) * w.tile_n;
    const double fmas = padded * s->k * batch / blocks, k_block = fmas / ((double)w.tile_m * w.tile_n);
    const double l2_bytes = 4.0 * (w.tile_m + w.tile_n) * k_block;
    const double per_sm = ceil(blocks / sms); /* blocks on the busiest SM */
    const double together = fmin(per_sm, resident(&L, &w, lim)), warps = together * threads / 32;
    const double t = (double)w.tile_m * w.tile_n / threads;
    const double rate = w.rate > 0 ? w.rate : 1;
    const double sm_clk = per_sm * fmax(fmas / (FMA_PER_CLK * rate * issue_share(t) * warp_share(warps)),
                                        l2_bytes / L2_BYTES_PER_CLK);
    const double dram = 4.0 * batch * ((double)s->m * s->k + (double)s->k * s->n + 2.0 * s->m * s->n) +
                        2.0 * (double)L.ws_bytes;
    const double clk = fmax(sm_clk, dram / (dram_bytes_per_clk_sm * sms));
    return clk / clock_hz + launch_s * (L.splitk > 1 || L.rgrid[0] ? 2 : 1);
}
