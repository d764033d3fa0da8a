/* gemmtune import: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_import(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'import' is not implemented yet\n");
    return 2;
}
