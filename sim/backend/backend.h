/*
 * backend.h: real replay backends, chosen by name.
 *
 * A backend executes an op stream for real on this machine and returns the
 * measured timeline in the same strata_results the simulator produces
 * (producer "host" or "cuda"), with a span (start and end, seconds from the
 * start of the timed run) for every op, so `strata validate` can compare a
 * simulation with reality op by op.
 *
 * The table of backends is one NULL-terminated static array in backend.c
 * (curl's vtls style): "host" runs anywhere; "cuda" runs when strata was
 * built with the CUDA toolkit and a device is present, and otherwise fails
 * with STRATA_ERROR_NO_DEVICE "no CUDA device".
 *
 * Invariants:
 *  1. run() reads the source from its start (it rewinds it) and checks it
 *     with trace/check.h, so a backend accepts exactly the traces the
 *     simulator accepts.
 *  2. On success *out has status ok, or oom when the trace asks for more
 *     than a memory's capacity (the ops before the failing alloc ran).
 *  3. Times are the median over `repeats` timed runs after `warmup`
 *     untimed ones: the run whose makespan is the median is reported whole.
 */
#ifndef STRATA_BACKEND_H
#define STRATA_BACKEND_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include "hw/hw.h"
#include "results/results.h"
#include "trace/source.h"

typedef struct strata_backend_options {
    int repeats;               /* timed runs (>= 1); the median is reported */
    int warmup;                /* untimed runs before them (>= 0) */
    const char *device_memory; /* cuda: "malloc" | "arena" | "async" */
    bool check_allocators;     /* the placement's invariant check after every allocator call */
} strata_backend_options;

void strata_backend_options_init(strata_backend_options *opt);

/* Options of `strata calibrate`. */
typedef struct strata_calibrate_options {
    uint64_t max_size;         /* largest copy measured (bytes) */
    double budget_s;           /* rough time budget per size and direction */
    const char *name;          /* [hardware] name, or NULL for a default */
} strata_calibrate_options;

void strata_calibrate_options_init(strata_calibrate_options *opt);

typedef struct strata_backend {
    const char *name;
    const char *summary;
    /* hw may be NULL: memories then have the shared names (hbm device,
     * host pinned, pageable pageable host; others device). */
    bool (*run)(const strata_hw *hw, strata_source *src, const strata_backend_options *opt,
                strata_results **out, GError **err);
    /* Appends a hardware .ini (hw.h's format, a comment per measurement) to ini;
     * progress lines go to log (may be NULL). */
    bool (*calibrate)(const strata_calibrate_options *opt, GString *ini, FILE *log, GError **err);
} strata_backend;

/* NULL with a STRATA_ERROR_INPUT error listing the known names. */
const strata_backend *strata_backend_find(const char *name, GError **err);
char *strata_backend_names(void); /* "host, cuda" (g_free) */

#endif
