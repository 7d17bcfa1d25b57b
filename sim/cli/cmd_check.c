/* cmd_check.c: `strata check`. PLACEHOLDER until its issue lands: reports that it is not built yet. */
#include <stdio.h>
#include "cli/cli.h"
#include "core/error.h"

int strata_cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "strata check: not implemented yet\n");
    return STRATA_EXIT_USAGE;
}
