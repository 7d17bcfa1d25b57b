/*
 * replay.h: the untimed replay of an op stream through one allocator for
 * one memory (the engine of `strata alloc`; no SimGrid, no timing).
 *
 * Every op goes through the trace checker (so the replay accepts exactly
 * the traces the other consumers accept); allocs, frees and releases of the
 * chosen memory go to its placement (placement/placement.h); everything
 * else is only checked. An allocator that plans ahead (offline) gets every
 * lifetime from a first pass before the replay. Trace
 * `option allocator.KEY=VALUE` lines apply to the allocator when it
 * declares KEY; the spec's own values win (as in every consumer).
 *
 * Out of memory stops the replay of allocations at the failing op, but the
 * rest of the trace is still checked, so bad input is reported as such
 * whatever the capacity.
 *
 * Invariants: the results are a function of the source and the options
 * only (deterministic); with check_each_op the allocator's invariants
 * (strata_allocator_check) hold after every op or the replay fails with
 * STRATA_ERROR_INTERNAL.
 */
#ifndef STRATA_REPLAY_H
#define STRATA_REPLAY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "alloc/alloc.h"
#include "results/results.h"
#include "trace/source.h"

/* The default memory of a trace without a hardware model (unnamed allocs). */
#define STRATA_REPLAY_DEFAULT_MEMORY "hbm"

typedef struct strata_replay_options {
    const char *allocator;  /* "NAME[:k=v,...]" */
    uint64_t capacity;
    uint64_t alignment;     /* 0: the allocator's own */
    /* Memory to replay: allocs naming it; unnamed allocs belong to
     * STRATA_REPLAY_DEFAULT_MEMORY. NULL: the default memory. */
    const char *memory;
    bool check_each_op;     /* run strata_allocator_check after every op */
    /* The capacity is the caller's choice: the trace's inferred memory
     * limit (`option allocator.device_limit`) is not applied. */
    bool ignore_device_limit;
    /* Where a planning allocator shows its progress (strata_progress_stream()); NULL: nowhere. */
    FILE *progress;
    /* Called once the allocator is made (before any op reaches it); NULL: none. */
    void (*opened)(void *user, const strata_allocator *allocator);
    /* Called after every alloc, free and release the allocator made (not
     * after an alloc that did not fit), with the op's index (options
     * excluded) and the allocator; NULL: none. */
    void (*after_op)(void *user, uint64_t index, const strata_allocator *allocator);
    void *user;
} strata_replay_options;

/* What one replay measured (also put into the results by the function below). */
typedef struct strata_replay_summary {
    bool oom;
    uint64_t ops;                  /* ops replayed before the end or the failing op */
    uint64_t peak_allocated, peak_reserved, internal_waste_at_peak;
    double fragmentation_peak;
    uint64_t planned_height, plan_lower_bound; /* offline planners, else 0 */
    /* What memory_analysis() reports, as the engine does (ledger/ledger.h):
     * arguments, outputs, aliased donations, the temp peak in program
     * order, their total, and the padding a rewrite added. */
    uint64_t argument_bytes, output_bytes, alias_bytes, temp_peak_bytes, jax_total_bytes, padding_bytes;
} strata_replay_summary;

/* Replays src (rewound first) and fills a new results value (*out, producer
 * "replay") and summary (may be NULL). False with err on bad input or a
 * broken invariant; out of memory is not an error (results->oom). */
bool strata_replay_run(strata_source *src, const strata_replay_options *opt,
                       strata_results **out, strata_replay_summary *summary, GError **err);

/* Adds the top-level keys of `strata alloc` to results (allocator,
 * capacity_bytes, peak_allocated_bytes, peak_reserved_bytes,
 * fragmentation_peak, internal_waste_bytes, and for planners
 * planned_height_bytes, lower_bound_bytes, height_over_lower_bound). */
void strata_replay_add_top_level(strata_results *r, const strata_replay_summary *s,
                                 const char *allocator_spec, uint64_t capacity);

/* Smallest capacity (a multiple of `step`, a power of two) at which the
 * replay completes, by doubling then bisection; assumes more memory never
 * makes a replay fail. False with err on bad input. */
bool strata_replay_min_capacity(strata_source *src, const strata_replay_options *opt,
                                uint64_t step, uint64_t *capacity, GError **err);

#endif
