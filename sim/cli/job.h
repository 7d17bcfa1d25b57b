/*
 * job.h: one run of a subcommand, around its one call into the core.
 *
 * Every command does the same things before and after its work: it parses
 * its options, names its inputs, opens every output before any work (an
 * unwritable path, or an output that would overwrite an input or another
 * output, is an error at once, exit 2), sends its human report to standard
 * error when an output is standard output, writes each output complete or
 * not at all (core/outfile.h), turns an error into "strata CMD: message"
 * and an exit status (core/error.h), and exits 130/143 with no output left
 * behind on SIGINT/SIGTERM (core/interrupt.h). A strata_job does all of it;
 * a cmd_*.c keeps its options and its call into the core.
 *
 * Use:
 *   strata_job *job = strata_job_new("run", "- simulate a trace", NULL, NULL, entries);
 *   if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL)) goto end;
 *   strata_job_input(job, "--trace", trace);
 *   strata_outfile *json = NULL;
 *   if (!strata_job_output(job, "--json", json_path, &json, &err)) goto end;
 *   ... work ...
 *   strata_job_commit_results(job, &json, results, &err);
 * end:
 *   return strata_job_end(job, status, err);
 *
 * Invariants:
 *  1. an output is opened (so checked) at most once and never names the
 *     same file as an input or another output; "-" (standard output) is
 *     taken by one output at most;
 *  2. outputs not committed when the job ends are aborted: their targets
 *     keep their old content;
 *  3. the signal watcher runs from strata_job_new() to strata_job_end().
 */
#ifndef STRATA_CLI_JOB_H
#define STRATA_CLI_JOB_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include "core/outfile.h"
#include "results/results.h"
#include "results/timeline.h"
#include "trace/source.h"

typedef struct strata_job strata_job;

/* A job for `strata CMD` whose options are `entries` (parameter_string,
 * summary and description as in GOptionContext; NULL: none; copied). */
strata_job *strata_job_new(const char *cmd, const char *parameter_string, const char *summary,
                           const char *description, const GOptionEntry *entries);
const char *strata_job_cmd(const strata_job *job);

/* The option context, owned by the job. */
GOptionContext *strata_job_context(strata_job *job);

/* Parses the options; then expects between min_args and max_args (-1: any)
 * arguments after the command's name, described by args_usage ("one
 * EXPERIMENT.ini": file names, so none may be empty; NULL: anything). On a
 * usage error prints it with a hint and returns false (exit 2). */
bool strata_job_parse(strata_job *job, int *argc, char ***argv, int min_args, int max_args,
                      const char *args_usage);

/* Names an input file (NULL and "-" are ignored), for the clobber check;
 * every input is named before the first output. An empty name is refused
 * ("OPTION: expected a file name, got ''"): false with err. */
bool strata_job_input(strata_job *job, const char *option, const char *path, GError **err);
/* A hardware file as an input, and the file its base = names (an output
 * there overwrote the base the run had just read). */
bool strata_job_input_hw(strata_job *job, const char *option, const char *path, GError **err);

/* An input that can be read only once (standard input as "-" or
 * /dev/stdin, a FIFO, a pipe, a device) copied whole to an unlinked
 * temporary, so that a reader that opens its input twice (two passes, a
 * sniff then a read) works on it as on a file: the path to read (the
 * copy's /proc/self/fd/N; path itself for a file or a directory), or NULL
 * with err. One such input a job. */
const char *strata_job_input_once(strata_job *job, const char *path, GError **err);

/* The job's output set (core/outfile.h), for a writer of many files (an
 * exporter, a sweep): its inputs are the job's, a signal discards it. */
strata_outfile_set *strata_job_outputs(strata_job *job);

/* Opens the output `path` of `option` (NULL: no output, *out stays NULL).
 * Fails when the path cannot be written, or names an input or an earlier
 * output of this job. */
bool strata_job_output(strata_job *job, const char *option, const char *path, strata_outfile **out,
                       GError **err);

/* strata_job_output() for --timeline: a path ending in ".gz" is written
 * gzip-compressed (outfile.h). Its name must end in a format's extension
 * (timeline.h; json_only: .json, for a command that writes no other) or
 * name a stream ("-", an existing FIFO or device: JSON); another name is
 * refused, naming the extensions, in every command alike. */
bool strata_job_output_timeline(strata_job *job, const char *path, bool json_only, strata_outfile **out,
                                GError **err);

/* Standard error when an output is standard output, else standard output. */
FILE *strata_job_human(const strata_job *job);

/* Says what the job is doing now (for the interrupt message). */
void strata_job_doing(strata_job *job, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Commits *out when `wrote` (a failed write is found and reported here),
 * else aborts it (err says why, the writer's or else "cannot write PATH");
 * NULL *out: nothing to do. *out is NULL afterwards. */
bool strata_job_commit(strata_job *job, strata_outfile **out, bool wrote, GError **err);
/* Write, then commit *out as above. */
bool strata_job_commit_text(strata_job *job, strata_outfile **out, const char *text, GError **err);
bool strata_job_commit_results(strata_job *job, strata_outfile **out, const strata_results *r, GError **err);
bool strata_job_commit_timeline(strata_job *job, strata_outfile **out, const strata_results *r, GError **err);
/* Drains src into *out as strata-trace text; returns ops written or -1. */
int64_t strata_job_commit_trace(strata_job *job, strata_outfile **out, strata_source *src, const char *comment,
                                GError **err);

/* Prints err (when set, and takes it) as "strata CMD: message", aborts the
 * outputs not committed, frees the job; returns the exit status: err's, or
 * `status` without one. */
int strata_job_end(strata_job *job, int status, GError *err);

#endif
