/*
 * main.c: the strata binary. Dispatches to one subcommand per cmd_*.c file,
 * looked up by name in the table below.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/error.h"

static const strata_command commands[] = {
    {"run", "simulate a trace on a hardware model (timed, SimGrid)", strata_cmd_run},
    {"alloc", "replay a trace through one allocator (untimed, fast)", strata_cmd_alloc},
    {"import", "convert a PyTorch snapshot or MiniMalloc CSV into a trace", strata_cmd_import},
    {"gen", "generate a workload trace (scan-mlp, adam-mlp, matmul, transformer)", strata_cmd_gen},
    {"transform", "apply policies to a trace and write the rewritten trace", strata_cmd_transform},
    {"sweep", "run a what-if experiment over a grid of points", strata_cmd_sweep},
    {"replay", "execute a trace for real on the host or a CUDA GPU", strata_cmd_replay},
    {"validate", "compare a simulation with a real replay of the same trace", strata_cmd_validate},
    {"calibrate", "measure this machine and write a hardware .ini", strata_cmd_calibrate},
    {"capture", "record a CUDA program's calls into a trace (LD_PRELOAD)", strata_cmd_capture},
    {"check", "check a trace and a hardware model without running them", strata_cmd_check},
    {NULL, NULL, NULL},
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: strata COMMAND [OPTIONS]...\n"
            "\n"
            "strata simulates accelerator memory hierarchies (HBM, VMEM, SMEM, host\n"
            "links, DMA engines) by replaying traces of allocations, copies and compute.\n"
            "\n"
            "Commands:\n");
    for (const strata_command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
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
    for (const strata_command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->main(argc - 1, argv + 1);
    fprintf(stderr, "strata: unknown command '%s'; known commands:", name);
    for (const strata_command *c = commands; c->name; c++)
        fprintf(stderr, " %s", c->name);
    fprintf(stderr, "\nRun 'strata --help' for usage.\n");
    return STRATA_EXIT_USAGE;
}
