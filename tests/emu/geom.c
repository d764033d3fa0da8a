// Prints the launch geometry (grid, block, splitk) of one candidate for tests/emu/run.py; exits 2 if split-K sizes are wrong.
#include "family.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    const gt_family *f = gt_family_find(argv[1]);
    gt_params p; char err[256];
    if (!f || gt_params_parse(f, argv[2], &p, err, sizeof err)) { fprintf(stderr, "bad %s\n", err); return 1; }
    gt_shape s = {atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), 0, 0};
    gt_launch L; f->launch(&p, &s, &L);
    printf("%u %u %u %u %u %u %d\n", L.grid[0], L.grid[1], L.grid[2], L.block[0], L.block[1], L.block[2], L.splitk);
    if (L.splitk > 1 && (L.ws_bytes != (size_t)L.splitk * s.m * s.n * 4 || (size_t)L.rgrid[0] * L.rblock[0] < (size_t)s.m * s.n)) return 2;
    return 0;
}
