/* gemmtune report: placeholder until its issue lands. */
#include "cli.h"

#include <stdio.h>

int gt_cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gemmtune: 'report' is not implemented yet\n");
    return 2;
}
