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

typedef struct strata_command {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
} strata_command;

int strata_cmd_run(int argc, char **argv);
int strata_cmd_alloc(int argc, char **argv);
int strata_cmd_import(int argc, char **argv);
/* `strata import kineto` (cmd_import_kineto.c), dispatched by cmd_import.c. */
int strata_import_kineto(int argc, char **argv);
int strata_cmd_gen(int argc, char **argv);
int strata_cmd_transform(int argc, char **argv);
int strata_cmd_sweep(int argc, char **argv);
int strata_cmd_replay(int argc, char **argv);
int strata_cmd_validate(int argc, char **argv);
/* `strata validate --against TRACE.json` (cmd_validate_kineto.c); ends the job. */
struct strata_job;
int strata_validate_against(struct strata_job *job, const char *trace, const char *hw_path);
int strata_cmd_calibrate(int argc, char **argv);
int strata_cmd_capture(int argc, char **argv);
int strata_cmd_check(int argc, char **argv);

/* Option and error helpers (job.c; commands use them through cli/job.h). */
/* Print "strata CMD: message" and return the exit status for err (frees err). */
int strata_cli_fail(const char *cmd, GError *err);

#endif
