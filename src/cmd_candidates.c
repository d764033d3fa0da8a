/* gemmtune candidates: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_candidates(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'candidates' is not implemented yet\n");
    return 2;
}
