/* gemmtune export: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_export(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'export' is not implemented yet\n");
    return 2;
}
