/*
 * engine_bare.h: the baseline of bench/bench_engine: a bare SimGrid program
 * issuing the same activities as the engine would for an op stream; and a
 * runner that times the engine and the baseline on the same trace.
 *
 * The op stream is first bound (bind/bind.h, not timed: a bare program
 * would have its activities compiled in) into per-stream
 * arrays of activities: copies (a transfer between the hosts the engine
 * would use), computes (an execution started beside its operand transfer,
 * or a sleep for time=, then the overhead), records and waits (the
 * engine's own engine_event.h). Allocs and frees are dropped: they take no
 * simulated time. Then SimGrid runs on the engine's own platform and hosts
 * (engine_platform.h) with one actor per stream and nothing else: no trace
 * reading, allocators or accounting. The same trace gives the same makespan
 * as strata_engine_run() when the run does not end out of memory
 * (tests/test_engine_bare.c asserts it).
 *
 * Like the engine, the bare program may run at most once per process:
 * strata_bare_compare() runs each in a child process of its own.
 */
#ifndef STRATA_ENGINE_BARE_H
#define STRATA_ENGINE_BARE_H

#include "hw/hw.h"
#include "trace/source.h"

typedef struct strata_bare_timing {
    double makespan_s;   /* simulated */
    uint64_t activities; /* copies, computes, records and waits issued */
    double setup_cpu_s;  /* CPU time of the platform and hosts (engine_platform_load) */
    double setup_wall_s;
    double run_cpu_s;    /* CPU time of the actors' creation and simgrid_run() */
    double run_wall_s;
} strata_bare_timing;

bool strata_engine_run_bare(const strata_hw *hw, strata_source *src, strata_bare_timing *out, GError **err);

/* One side of a comparison, measured in a child process. */
typedef struct strata_bare_report {
    bool ok;
    double cpu_s, wall_s;  /* both: the model's load; engine: the trace's opening and the whole
                            * strata_engine_run(); bare: the platform, actors and simgrid_run() */
    double makespan_s;
    uint64_t ops;          /* engine: ops executed; bare: activities */
} strata_bare_report;

/* Runs the engine, then the bare program, on the trace at trace_path on the
 * hardware model at hw_path, each in a child process; false when either
 * failed (its message on stderr). */
/* The engine on the compiled trace at compiled_path (strata_engine_compile
 * of the same trace and model), in a child process: the model's load and
 * the whole strata_engine_run_compiled(), reading the file included. */
strata_bare_report strata_bare_engine_compiled(const char *hw_path, const char *compiled_path);
bool strata_bare_compare(const char *hw_path, const char *trace_path, strata_bare_report *engine,
                         strata_bare_report *bare);

#endif
