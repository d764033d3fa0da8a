/* gemmtune merge: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_merge(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'merge' is not implemented yet\n");
    return 2;
}
