/*
 * experiment.h: a what-if study read from an experiment .ini (GLib key file),
 * and the grid of points it describes.
 *
 *   [experiment]  name, description, hardware, one of trace / workload /
 *                 snapshot, policies, allocator, runner = run|alloc,
 *                 capacity, memory, alignment (the last three for alloc)
 *   [sweep]       one axis per key: KEY = V1, V2, ... ("..." quotes a value
 *                 that holds commas). KEY is a hardware key
 *                 (memory.hbm.capacity, link.pcie.bandwidth,
 *                 memory.hbm.allocator, compute.mxu.flops), a workload
 *                 parameter (workload.bm), `policy` (each value a set of
 *                 policies joined by '+', or `none`), `policy.NAME` (NAME=V
 *                 added to the set, `off` leaves it out), `allocator`,
 *                 `capacity`, or `hardware` (a list of .ini files).
 *                 A key "A + B" is a joint axis: each value is a tuple
 *                 "a b" of one word per member, the members varying
 *                 together; its values are the tuples' text.
 *   [output]      figures (result keys such as makespan_s or
 *                 memories.hbm.peak_allocated_bytes), plots (memory,
 *                 address-map, links, axes, or all / none), timeline
 *                 (bool), report (bool), title.
 * docs/experiments.md is the user's reference.
 *
 * Points are the cross product of the axes, numbered from 0 with the last
 * axis varying fastest (like nested loops in declaration order). Relative
 * paths are relative to the experiment file's folder.
 *
 * Invariants: after a successful load every group and key is known, every
 * axis has at least one value, every value was validated as far as strata
 * can without running (hardware overrides load, workload parameters and
 * policy and allocator names exist), and the loaded experiment is
 * immutable. Errors are STRATA_ERROR_INPUT "FILE:LINE: what was expected".
 */
#ifndef STRATA_SWEEP_EXPERIMENT_H
#define STRATA_SWEEP_EXPERIMENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct strata_experiment strata_experiment;

typedef enum {
    STRATA_RUNNER_RUN,   /* strata run: timed, SimGrid */
    STRATA_RUNNER_ALLOC, /* strata alloc: untimed allocator replay */
} strata_runner_kind;

/* How an axis's values read as numbers (for charts). */
typedef enum {
    STRATA_AXIS_TEXT,      /* not numeric: categories */
    STRATA_AXIS_NUMBER,    /* plain number */
    STRATA_AXIS_SIZE,      /* bytes */
    STRATA_AXIS_BANDWIDTH, /* bytes/s */
    STRATA_AXIS_TIME,      /* seconds */
} strata_axis_unit;

strata_experiment *strata_experiment_load(const char *path, GError **err);
/* data: the file's text; origin: its path (relative paths resolve against
 * its folder; need not exist). */
strata_experiment *strata_experiment_load_data(const char *data, const char *origin, GError **err);
void strata_experiment_free(strata_experiment *e);

const char *strata_experiment_name(const strata_experiment *e);
const char *strata_experiment_title(const strata_experiment *e);
const char *strata_experiment_description(const strata_experiment *e); /* "" when absent */
const char *strata_experiment_origin(const strata_experiment *e);     /* absolute path */
/* The files a sweep reads: the experiment, its hardware files (axes'
 * included), trace and snapshot; absolute, NULL-terminated (g_strfreev). */
char **strata_experiment_inputs(const strata_experiment *e);
strata_runner_kind strata_experiment_runner(const strata_experiment *e);

guint strata_experiment_axis_count(const strata_experiment *e);
const char *strata_experiment_axis_name(const strata_experiment *e, guint axis);
guint strata_experiment_axis_size(const strata_experiment *e, guint axis);
const char *strata_experiment_axis_value(const strata_experiment *e, guint axis, guint value);
strata_axis_unit strata_experiment_axis_unit(const strata_experiment *e, guint axis);
/* The value as a number in the axis's unit; false for TEXT axes. */
bool strata_experiment_axis_number(const strata_experiment *e, guint axis, guint value, double *out);
const char *strata_axis_unit_name(strata_axis_unit unit); /* "text", "bytes", ... */

uint64_t strata_experiment_point_count(const strata_experiment *e);
/* Index into axis `axis`'s values at point `point` (< point_count). */
guint strata_experiment_point_value(const strata_experiment *e, uint64_t point, guint axis);

const char *const *strata_experiment_figures(const strata_experiment *e); /* NULL-terminated */
/* "FILE:LINE" of [output] figures as the file was named; NULL: the runner's default figures */
const char *strata_experiment_figures_where(const strata_experiment *e);
const char *strata_experiment_plots_text(const strata_experiment *e); /* "memory,links,..." */
bool strata_experiment_timeline(const strata_experiment *e);
bool strata_experiment_report(const strata_experiment *e);

/* The commands of one point (argv without the binary, NULL-terminated;
 * g_strfreev). input_argv is NULL when the trace is a file given as is;
 * otherwise it writes the trace (gen or import) to *input_path, a file under
 * out_dir/inputs named by a hash of the command (so points sharing an input
 * share the file). run_argv runs the point and writes json_path (and
 * timeline_path when not NULL). */
typedef struct strata_point_plan {
    char **input_argv;
    char *input_path;
    char **run_argv;
} strata_point_plan;

strata_point_plan *strata_experiment_plan(const strata_experiment *e, uint64_t point,
                                          const char *out_dir, const char *json_path,
                                          const char *timeline_path);
void strata_point_plan_free(strata_point_plan *plan);

#endif
