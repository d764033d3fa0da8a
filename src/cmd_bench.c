/* gemmtune bench: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'bench' is not implemented yet\n");
    return 2;
}
