/* gemmtune query: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_query(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'query' is not implemented yet\n");
    return 2;
}
