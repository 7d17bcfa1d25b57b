/* cmd_capture.c: `strata capture`. PLACEHOLDER until its issue lands: reports that it is not built yet. */
#include <stdio.h>
#include "cli/cli.h"
#include "core/error.h"

int strata_cmd_capture(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "strata capture: not implemented yet\n");
    return STRATA_EXIT_USAGE;
}
