/*
 * cli.h: the subcommands of the strata binary, one file each (cmd_*.c).
 *
 * Each subcommand is `int strata_cmd_NAME(int argc, char **argv)` where
 * argv[0] is the subcommand's name; it declares its options (GOptionEntry,
 * so `strata NAME --help` documents every option) and makes its one call
 * into the core; a strata_job (cli/job.h) does the rest: inputs, outputs,
 * errors as "strata NAME: message" on stderr, signals, and the exit status
 * from core/error.h: 0 done, 1 out of memory in the simulated program,
 * 2 bad input or usage, 3 internal error, 130/143 interrupted.
 */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include <glib.h>
#include <stdbool.h>
#include "cli/job.h"

typedef struct strata_command {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
    /* NULL, or the names of the command's choices (", "-separated, g_free),
     * from the command's own table, shown after the summary. */
    char *(*choices)(void);
} strata_command;

/* The subcommands (commands.c), NULL-terminated, in `strata --help` order. */
const strata_command *strata_commands(void);

/* A format of `import` or `export` (their tables): its name, summary and
 * entry. Both commands list and dispatch their NULL-terminated tables with
 * formats.c's two functions. */
typedef struct strata_format {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
} strata_format;
typedef strata_format strata_import_format;
/* The table's names, ", "-separated (g_free). */
char *strata_format_names(const strata_format *table);
/* `strata VERB FORMAT ...`: --help prints USAGE, WHAT and the table; a known
 * FORMAT runs its entry on argv + 1; else usage on stderr and exit 2. */
int strata_format_dispatch(const char *verb, const char *usage, const char *what, const strata_format *table,
                           int argc, char **argv);
/* The import formats, NULL-terminated, and their names (", "-separated, g_free). */
const strata_import_format *strata_import_formats(void);
char *strata_import_format_names(void);

int strata_cmd_run(int argc, char **argv);
int strata_cmd_alloc(int argc, char **argv);
int strata_cmd_import(int argc, char **argv);
/* `strata import kineto` (cmd_import_kineto.c), dispatched by cmd_import.c. */
int strata_import_kineto(int argc, char **argv);
/* `strata import chakra` (cmd_import_chakra.c), dispatched by cmd_import.c. */
int strata_import_chakra(int argc, char **argv);
/* `strata export FORMAT` (cmd_export.c) and its formats' names (", ", g_free). */
int strata_cmd_export(int argc, char **argv);
char *strata_export_format_names(void);
/* `strata import jax-profile` (cmd_import_jax.c), dispatched by cmd_import.c. */
int strata_import_jax_profile(int argc, char **argv);
int strata_cmd_gen(int argc, char **argv);
int strata_cmd_transform(int argc, char **argv);
int strata_cmd_sweep(int argc, char **argv);
int strata_cmd_replay(int argc, char **argv);
int strata_cmd_validate(int argc, char **argv);
/* `strata validate --against TRACE.json` (cmd_validate_kineto.c); ends the job. */
int strata_validate_against(strata_job *job, const char *trace, const char *hw_path);
int strata_cmd_calibrate(int argc, char **argv);
int strata_cmd_capture(int argc, char **argv);
int strata_cmd_check(int argc, char **argv);

/* What the importers (cmd_import.c, cmd_import_kineto.c) share: the options
 * they all take, and their one run. */
#define STRATA_IMPORT_OPTION_OUTPUT(var)                                                                   \
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, (var), "where to write the trace (default '-': standard output)", \
     "OUT.trace"}
#define STRATA_IMPORT_OPTION_QUIET(var)                                                                    \
    {"quiet", 'q', 0, G_OPTION_ARG_NONE, (var),                                                            \
     "do not show the bytes read on standard error when it is a terminal", NULL}
#define STRATA_IMPORT_OPTION_ALLOCATOR(var)                                                                \
    {"allocator", 0, 0, G_OPTION_ARG_STRING, (var), "allocator for --fidelity, NAME[:k=v,...] (default caching)", \
     "SPEC"}
/* Converts `input` into *out (open; committed or aborted here), with the
 * importer's own options `args`. */
typedef bool (*strata_import_fn)(strata_job *job, const char *input, strata_outfile **out, const void *args,
                                 GError **err);
/* An importer: its command and help (as strata_job_new() takes them), its
 * one argument, and its conversion. */
typedef struct strata_importer {
    const char *cmd;              /* "import xla" */
    const char *parameter_string; /* "DIR_OR_FILE - import a module of an XLA dump" */
    const char *summary;
    const char *args_usage;       /* "one DIR_OR_FILE", for the usage error */
    const char *input_name;       /* "DIR_OR_FILE", for the clobber check */
    strata_import_fn convert;
} strata_importer;
/* An importer's run: makes its job with `entries`, parses the options,
 * expects the one argument, opens --output *out_path (an option's variable,
 * so read after parsing; NULL: standard output), converts with `args`; ends
 * the job and returns the exit status (0, else the error's, or 2). */
int strata_import_run(const strata_importer *imp, const GOptionEntry *entries, int argc, char **argv,
                      char *const *out_path, const void *args);

/* Option and error helpers (job.c; commands use them through cli/job.h). */
/* Print "strata CMD: message" and return the exit status for err (frees err). */
int strata_cli_fail(const char *cmd, GError *err);

#endif
