/* gemmtune tune: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_tune(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'tune' is not implemented yet\n");
    return 2;
}
