/*
 * engine_bare.h: the baseline of bench/bench_engine: a bare SimGrid program
 * issuing the same activities as the engine would for an op stream.
 *
 * The op stream is first resolved (not timed) into per-stream arrays of
 * activities: copies (a transfer between the hosts the engine would use),
 * computes (an execution started beside its operand transfer, or a sleep for
 * time=, then the overhead), records and waits (suspend/resume). Allocs and
 * frees are dropped: they take no simulated time. Then SimGrid runs on the
 * engine's own platform with one actor per stream and nothing else: no trace
 * reading, checking, allocators or accounting. The same trace must give the
 * same makespan as strata_engine_run(), which the benchmark prints.
 *
 * Like the engine, it may run at most once per process.
 */
#ifndef STRATA_ENGINE_BARE_H
#define STRATA_ENGINE_BARE_H

#include "hw/hw.h"
#include "trace/source.h"

typedef struct strata_bare_timing {
    double makespan_s;   /* simulated */
    uint64_t activities; /* copies, computes, records and waits issued */
    double run_cpu_s;    /* CPU time of simgrid_run() alone */
    double run_wall_s;
} strata_bare_timing;

bool strata_engine_run_bare(const strata_hw *hw, strata_source *src, strata_bare_timing *out, GError **err);

#endif
