/*
 * runner.h: running the points of an experiment, one process per point.
 *
 * SimGrid allows one engine per process, so every point is its own process:
 * the strata binary itself (`strata sweep EXP --out DIR --point N`), which in
 * turn runs the point's commands (gen or import for the input trace, then
 * run or alloc). Up to `jobs` points run at once.
 *
 * Files under OUT:
 *   points/ID.json           the point: axes, command, status, results (atomic)
 *   points/ID.timeline.json  its Perfetto timeline (when the experiment asks)
 *   points/ID.log            a running or failed point's output
 *   inputs/HASH.trace        generated or imported traces, shared by points
 * ID is the point number, zero-padded (0007).
 *
 * Invariants:
 *  1. points/ID.json exists only complete (written to a temporary and
 *     renamed), so a sweep killed at any moment resumes by skipping the
 *     points whose json exists, parses, and records the same command;
 *  2. a point that runs out of memory is a result (status "oom"), not a
 *     failure; a point whose command fails with bad input is a failure: no
 *     json is written, no further point is started, and the sweep reports it;
 *  3. progress goes to stderr only when it is a terminal.
 */
#ifndef STRATA_SWEEP_RUNNER_H
#define STRATA_SWEEP_RUNNER_H

#include "core/outfile.h"
#include <stdbool.h>
#include <stdio.h>
#include "sweep/experiment.h"

typedef struct strata_sweep_ctx {
    const strata_experiment *exp;
    const char *exe;     /* the strata binary (absolute) */
    const char *out_dir; /* absolute */
    /* A shard: only the points p with p % shard_count == shard_index
     * (shard_count 0: every point). */
    uint64_t shard_index, shard_count;
    /* The command's outputs (core/outfile.h): the sweep's results and
     * points are written in it, never over the experiment's inputs. */
    strata_outfile_set *outs;
} strata_sweep_ctx;

/* The first point at or after `from` that belongs to the context's shard, or the experiment's point count
 * when none does: a walk over a shard steps by its N rather than testing every point (10^9 points tested for
 * --shard K/10^8's 10 took 18 s). */
uint64_t strata_sweep_next_selected(const strata_sweep_ctx *ctx, uint64_t from);

/* "0007" (g_free). */
char *strata_sweep_point_id(const strata_experiment *e, uint64_t point);
/* OUT/points/ID.json (g_free). */
char *strata_sweep_point_json_path(const strata_sweep_ctx *ctx, uint64_t point);
/* The single command that runs one point: argv with the binary (g_strfreev). */
char **strata_sweep_point_command(const strata_sweep_ctx *ctx, uint64_t point);
/* Shell-quoted form of an argv (g_free). */
char *strata_sweep_shell_join(char *const *argv);

/* Whether the point's json exists, is complete and matches its command. */
bool strata_sweep_point_done(const strata_sweep_ctx *ctx, uint64_t point);

/* Runs one point in this process's children; writes its json. */
bool strata_sweep_run_point(const strata_sweep_ctx *ctx, uint64_t point, GError **err);

typedef struct strata_sweep_stats {
    uint64_t total, skipped, ran, oom; /* total: the selected points */
} strata_sweep_stats;

/* Runs every selected point not done, `jobs` at a time; progress on `progress` when
 * not NULL (strata_progress_stream()). Fails (after the running points end) on the first failed point. */
bool strata_sweep_run_all(const strata_sweep_ctx *ctx, guint jobs, FILE *progress,
                          strata_sweep_stats *stats, GError **err);

#endif
