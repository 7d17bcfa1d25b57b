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
#include <stddef.h>
#include <stdint.h>
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

struct strata_importer;
struct strata_exporter;
/* A format of `import` or `export` (their tables): its name, summary and
 * row, an importer (strata_import_run runs it) or an exporter
 * (strata_export_run). Both commands list and dispatch their NULL-terminated
 * tables with formats.c's two functions. */
typedef struct strata_format {
    const char *name;
    const char *summary;
    const struct strata_importer *importer;
    const struct strata_exporter *exporter;
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
/* The importers of their own files (cmd_import_FORMAT.c), rows of
 * cmd_import.c's table. */
extern const struct strata_importer strata_importer_kineto, strata_importer_chakra, strata_importer_jax_profile;
/* `strata export FORMAT` (cmd_export.c) and its formats' names (", ", g_free). */
int strata_cmd_export(int argc, char **argv);
char *strata_export_format_names(void);
int strata_cmd_gen(int argc, char **argv);
int strata_cmd_transform(int argc, char **argv);
int strata_cmd_sweep(int argc, char **argv);
int strata_cmd_serve(int argc, char **argv);
int strata_cmd_replay(int argc, char **argv);
int strata_cmd_validate(int argc, char **argv);
/* `strata validate --against TRACE.json` (cmd_validate_kineto.c); ends the job. */
int strata_validate_against(strata_job *job, const char *trace, const char *hw_path);
int strata_cmd_calibrate(int argc, char **argv);
int strata_cmd_capture(int argc, char **argv);
int strata_cmd_check(int argc, char **argv);

/* ---- importers (cmd_import*.c) ----
 * An importer is a row (strata_importer) and a conversion: its options are
 * declared in the row, parsed into an args struct the run makes, and the
 * conversion reads them there. Every args struct starts with the options
 * all importers share (strata_import_common); each of the importer's own
 * options is a GOptionEntry whose arg_data is its field's offset in the
 * args struct (STRATA_IMPORT_FIELD). */
typedef struct strata_import_common {
    char *out_path;  /* --output (NULL: standard output) */
    gboolean quiet;  /* --quiet, where the row takes it */
} strata_import_common;
#define STRATA_IMPORT_FIELD(type, field) ((gpointer)(uintptr_t)offsetof(type, field))
#define STRATA_IMPORT_OPTION_ALLOCATOR(type)                                                               \
    {"allocator", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(type, allocator),                        \
     "allocator for --fidelity, NAME[:k=v,...] (default caching)", "SPEC"}
/* --allocator and --capacity go with --fidelity, which alone reads them
 * (without it they were ignored at exit 0), and --allocator's spec is one
 * the allocator table makes: false with err otherwise. */
bool strata_import_fidelity_args(bool fidelity, const char *allocator, const char *capacity, GError **err);
/* Converts `input` into *out (open; committed or aborted here), with the
 * importer's args (its struct, strata_import_common first). */
typedef bool (*strata_import_fn)(strata_job *job, const char *input, strata_outfile **out, const void *args,
                                 GError **err);
/* An importer: its command and help (as strata_job_new() takes them), its
 * one argument, its options and its conversion. */
typedef struct strata_importer {
    const char *cmd;              /* "import xla" */
    const char *parameter_string; /* "DIR_OR_FILE - import a module of an XLA dump" */
    const char *summary;
    const char *args_usage;       /* "one DIR_OR_FILE", for the usage error */
    const char *input_name;       /* "DIR_OR_FILE", for the clobber check */
    strata_import_fn convert;
    size_t args_size;             /* its args struct (0: strata_import_common alone) */
    void (*args_init)(void *args); /* after zeroing, before parsing; NULL: none */
    /* its own options, after --output, in --help order; NULL-name terminated,
     * arg_data STRATA_IMPORT_FIELD; NULL: none */
    const GOptionEntry *options;
    bool quiet;                   /* takes --quiet (shown last) */
} strata_importer;
/* An importer's run: makes its job with --output, the row's options and
 * --quiet, parses them into a new args struct, expects the one argument,
 * opens --output, converts; ends the job, frees the args (their strings
 * too) and returns the exit status (0, else the error's, or 2). */
int strata_import_run(const strata_importer *imp, int argc, char **argv);

/* ---- exporters (cmd_export.c) ----
 * An exporter is a row: its help, what its --output names (a file, a
 * prefix), and its writer; strata_export_run takes --trace and --output,
 * opens the trace (checked as it is read) and hands both to the writer. */
/* Writes the trace src (read from `trace`) to `out`, as --output gave it;
 * prints its own line on standard error. */
typedef bool (*strata_export_fn)(strata_job *job, strata_source *src, const char *trace, const char *out,
                                 GError **err);
typedef struct strata_exporter {
    const char *cmd;              /* "export chakra" */
    const char *parameter_string; /* "- write a trace as Chakra execution traces" */
    const char *summary;
    const char *output_help;      /* --output's help */
    const char *output_arg;       /* --output's argument: "PREFIX" */
    strata_export_fn write;
} strata_exporter;
/* An exporter's run: --trace T.trace and -o OUT (both required), the trace
 * opened, the writer called; ends the job, returns the exit status. */
int strata_export_run(const strata_exporter *ex, int argc, char **argv);

/* Option and error helpers (job.c; commands use them through cli/job.h). */
/* Print "strata CMD: message" and return the exit status for err (frees err). */
int strata_cli_fail(const char *cmd, GError *err);

#endif
