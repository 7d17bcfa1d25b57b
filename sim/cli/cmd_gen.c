/* cmd_gen.c: `strata gen`. PLACEHOLDER until its issue lands: reports that it is not built yet. */
#include <stdio.h>
#include "cli/cli.h"
#include "core/error.h"

int strata_cmd_gen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "strata gen: not implemented yet\n");
    return STRATA_EXIT_USAGE;
}
