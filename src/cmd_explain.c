/* gemmtune explain: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_explain(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'explain' is not implemented yet\n");
    return 2;
}
