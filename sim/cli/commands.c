/*
 * commands.c: the table of strata's subcommands, one line each: its name,
 * its one-line summary, and (for commands that take a named kind of input)
 * a function listing the choices from that command's own table, so that
 * `strata --help` is generated from the tables and cannot drift from them.
 *
 * Invariant: every cmd_*.c entry point appears here exactly once; the order
 * is the order `strata --help` shows (tests/test_cli_help.c checks the help
 * against this table, the import formats and the workload types).
 */
#include "cli/cli.h"
#include "workload/workload.h"

static const strata_command commands[] = {
    {"run", "simulate a trace on a hardware model (timed, SimGrid)", strata_cmd_run, NULL},
    {"alloc", "replay a trace through one allocator (untimed, fast)", strata_cmd_alloc, NULL},
    {"import", "convert another tool's output into a trace; formats:", strata_cmd_import,
     strata_import_format_names},
    {"export", "write a trace in another tool's format; formats:", strata_cmd_export, strata_export_format_names},
    {"gen", "generate a workload trace; workloads:", strata_cmd_gen, strata_workload_type_names},
    {"transform", "apply policies to a trace and write the rewritten trace", strata_cmd_transform, NULL},
    {"serve", "simulate serving a request stream: vLLM's scheduler over a KV cache", strata_cmd_serve, NULL},
    {"sweep", "run a what-if experiment over a grid of points", strata_cmd_sweep, NULL},
    {"replay", "execute a trace for real on the host or a CUDA GPU", strata_cmd_replay, NULL},
    {"validate", "compare a simulation with a real replay of the same trace", strata_cmd_validate, NULL},
    {"calibrate", "measure this machine and write a hardware .ini", strata_cmd_calibrate, NULL},
    {"capture", "record a CUDA program's calls into a trace (LD_PRELOAD)", strata_cmd_capture, NULL},
    {"check", "check a trace and a hardware model without running them", strata_cmd_check, NULL},
    {NULL, NULL, NULL, NULL},
};

const strata_command *strata_commands(void) { return commands; }
