/*
 * formats.c: the format tables of `strata import` and `strata export`
 * (cli.h's strata_format): their listing and their dispatch by name, one
 * code for both commands, so their help and errors read alike.
 *
 * Invariant: a table ends with an entry whose name is NULL.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/error.h"

char *strata_format_names(const strata_format *table)
{
    GString *s = g_string_new(NULL);
    for (const strata_format *f = table; f->name; f++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", f->name);
    return g_string_free(s, FALSE);
}

static void usage(FILE *out, const char *verb, const char *usage_line, const char *what, const strata_format *table)
{
    fprintf(out, "Usage: strata %s %s\n\n%s Formats:\n", verb, usage_line, what);
    for (const strata_format *f = table; f->name; f++)
        fprintf(out, "  %-11s %s\n", f->name, f->summary);
    fprintf(out, "\nRun 'strata %s FORMAT --help' for a format's options.\n", verb);
}

int strata_format_dispatch(const char *verb, const char *usage_line, const char *what, const strata_format *table,
                           int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr, verb, usage_line, what, table);
        return STRATA_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout, verb, usage_line, what, table);
        return STRATA_EXIT_OK;
    }
    for (const strata_format *f = table; f->name; f++)
        if (strcmp(f->name, argv[1]) == 0)
            return f->importer ? strata_import_run(f->importer, argc - 1, argv + 1)
                               : strata_export_run(f->exporter, argc - 1, argv + 1);
    fprintf(stderr, "strata %s: unknown format '%s'; known formats:", verb, argv[1]);
    for (const strata_format *f = table; f->name; f++)
        fprintf(stderr, " %s", f->name);
    fprintf(stderr, "\n");
    return STRATA_EXIT_USAGE;
}
