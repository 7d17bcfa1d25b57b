/*
 * main.c: the strata binary. Dispatches to one subcommand per cmd_*.c file,
 * looked up by name in the command table (commands.c); the usage below is
 * generated from that table, and a command's choices (import formats,
 * workloads) from the command's own table.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/error.h"

/* Writes `words` (", "-separated) after `indent` spaces, wrapped at 79 columns. */
static void print_wrapped(FILE *out, const char *words, int indent)
{
    char **list = g_strsplit(words, ", ", -1);
    int col = indent;
    fprintf(out, "%*s", indent, "");
    for (char **w = list; *w; w++) {
        int len = (int)strlen(*w) + (w[1] ? 1 : 0);
        if (col > indent && col + 1 + len > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        }
        col += fprintf(out, "%s%s%s", col > indent ? " " : "", *w, w[1] ? "," : "");
    }
    fputc('\n', out);
    g_strfreev(list);
}

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: strata COMMAND [OPTIONS]...\n"
            "\n"
            "strata simulates accelerator memory hierarchies (HBM, VMEM, SMEM, host\n"
            "links, DMA engines) by replaying traces of allocations, copies and compute.\n"
            "\n"
            "Commands:\n");
    for (const strata_command *c = strata_commands(); c->name; c++) {
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
        if (c->choices) {
            char *choices = c->choices();
            print_wrapped(out, choices, 13);
            g_free(choices);
        }
    }
    fprintf(out,
            "\n"
            "Run 'strata COMMAND --help' for a command's options.\n"
            "Exit status: 0 done; 1 the simulated program ran out of memory (results\n"
            "are still written); 2 bad input or usage; 3 internal error.\n"
            "Docs: README.md, traces/FORMAT.md, docs/.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return STRATA_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return STRATA_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("strata %s\n", STRATA_VERSION);
        return STRATA_EXIT_OK;
    }
    for (const strata_command *c = strata_commands(); c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->main(argc - 1, argv + 1);
    fprintf(stderr, "strata: unknown command '%s'; known commands:", name);
    for (const strata_command *c = strata_commands(); c->name; c++)
        fprintf(stderr, " %s", c->name);
    fprintf(stderr, "\nRun 'strata --help' for usage.\n");
    return STRATA_EXIT_USAGE;
}
