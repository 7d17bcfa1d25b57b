/* cli_common.c: helpers shared by the subcommands (error printing, option parsing). */
#include <stdio.h>
#include "cli/cli.h"
#include "core/error.h"

int strata_cli_fail(const char *cmd, GError *err)
{
    int status = strata_exit_for_error(err);
    fprintf(stderr, "strata %s: %s\n", cmd, err ? err->message : "failed");
    g_clear_error(&err);
    return status == STRATA_EXIT_OK ? STRATA_EXIT_USAGE : status;
}

gboolean strata_cli_expect_no_args(const char *cmd, int argc, char **argv)
{
    if (argc <= 1)
        return TRUE;
    fprintf(stderr, "strata %s: unexpected argument '%s'\nRun 'strata %s --help' for usage.\n", cmd, argv[1], cmd);
    return FALSE;
}

gboolean strata_cli_parse(GOptionContext *ctx, int *argc, char ***argv, const char *cmd, int *status)
{
    GError *err = NULL;
    if (!g_option_context_parse(ctx, argc, argv, &err)) {
        fprintf(stderr, "strata %s: %s\nRun 'strata %s --help' for usage.\n", cmd, err->message, cmd);
        g_clear_error(&err);
        *status = STRATA_EXIT_USAGE;
        return FALSE;
    }
    return TRUE;
}
