/*
 * engine.h: the timed simulation of an op stream on a hardware model.
 *
 * The engine is the only part of strata that includes simgrid/ headers.
 * It generates a SimGrid platform from the hardware model (memories and
 * compute units are hosts, links are links, routes are hw.h's routes), runs
 * one actor per stream, turns copies into communications and computes into
 * executions, and drives each memory's allocator (models/alloc) at every
 * alloc and free. SimGrid runs the CM02 network model with cross-traffic
 * off, so a transfer of B bytes over a route of bottleneck bandwidth W and
 * latencies L takes sum(L) + B/W when alone, and concurrent transfers share
 * bandwidth max-min fairly.
 *
 * SimGrid allows one engine per process: strata_engine_run() may be called
 * at most once per process (tests run each case in a forked process).
 *
 * Results: true with *out set (status ok or oom) when the trace ran to its
 * end or to an out-of-memory; false with err for bad input.
 */
#ifndef STRATA_ENGINE_H
#define STRATA_ENGINE_H

#include "hw/hw.h"
#include "results/results.h"
#include "results/timeline.h"
#include "trace/source.h"

/* The clock a unit with peak_clock and sustained_clock runs a compute at
 * (engine_power.h): DUTY, from its filtered matrix activity where the
 * unit gives clock_response, else the peak; PEAK, always the peak;
 * SUSTAINED, always sustained_clock. */
typedef enum strata_engine_clock {
    STRATA_ENGINE_CLOCK_DUTY,
    STRATA_ENGINE_CLOCK_PEAK,
    STRATA_ENGINE_CLOCK_SUSTAINED,
} strata_engine_clock;

typedef struct strata_engine_options {
    bool record_spans;          /* fill results->spans and mem_samples */
    FILE *timeline;             /* write the spans and samples there as a timeline while running
                                 * (results/timeline.h) instead of keeping them; NULL: none */
    const strata_timeline_format *timeline_format; /* its format (strata_timeline_format_of); NULL: JSON */
    bool check_allocators;      /* strata_allocator_check() after every op */
    const char *allocator;      /* override every memory's allocator (spec), or NULL */
    size_t tape_budget;         /* bytes the first pass may use to keep the bound ops for the
                                 * second to replay, in memory and on file; past it the second
                                 * pass reads the source again (same results, slower);
                                 * 0: STRATA_ENGINE_TAPE_BUDGET */
    size_t tape_memory;         /* bytes of that tape kept in memory; past it its chunks wait
                                 * in a temporary file (TMPDIR) until the second pass reads them
                                 * back (same results); 0: STRATA_ENGINE_TAPE_MEMORY */
    size_t queue_memory;        /* bytes of ops queued for streams behind in file order that stay
                                 * in memory; past it they wait in a temporary file (same results);
                                 * 0: STRATA_ENGINE_QUEUE_MEMORY */
    strata_engine_clock clock;  /* the units' clocks under their power limit (engine_power.h) */
    FILE *progress;             /* a progress line there (core/progress.h: the ops read, then
                                 * the ops simulated of all and the simulated time); NULL: none */
} strata_engine_options;

/* about 800M ops of 20 bytes: the tape's length on disk before the source is read again */
#define STRATA_ENGINE_TAPE_BUDGET ((size_t)16 << 30)
/* 64 chunks of 256 KiB (engine_tape.h): a program of up to about 1.5M ops never touches the file;
 * the replay's memory past it is one chunk, where the tape held in memory would stay beside the
 * simulation's state until replayed (up to 64 MiB on the 64-chip 8B step: bench_pods 64_8b, docs/engine.md) */
#define STRATA_ENGINE_TAPE_MEMORY ((size_t)16 << 20)
/* 16,384 chunks of 1 KiB: a drift of millions of ops, a few bytes each, goes to the file */
#define STRATA_ENGINE_QUEUE_MEMORY ((size_t)16 << 20)

void strata_engine_options_init(strata_engine_options *opt);

bool strata_engine_run(const strata_hw *hw, strata_source *src, const strata_engine_options *opt,
                       strata_results **out, GError **err);

/* Compiled traces (engine_compiled.h): the engine's first pass over src
 * (reading, checking, binding to hw) written to stream, the file at path
 * (named in messages; the caller keeps it whole or not at all), which
 * strata_engine_run_compiled() then replays on the same model without
 * the text: the same results as strata_engine_run() on src, byte for byte.
 * Refused (exit 2): a program on several devices (an SPMD expansion), a
 * memory whose allocator plans from lifetimes, a trace past the tape's
 * budget. opt: its allocator (the run's may differ, if it does not plan)
 * and tape_budget. */
bool strata_engine_compile(const strata_hw *hw, strata_source *src, const strata_engine_options *opt,
                           const char *path, FILE *stream, GError **err);
/* True when the file at path is a compiled trace (by its magic bytes). */
bool strata_engine_is_compiled(const char *path);
/* Runs the compiled trace at path as strata_engine_run() runs its text;
 * refused (exit 2, naming the file) when it is damaged or truncated, or
 * was compiled by another strata or for another model (hw's fingerprint,
 * its --set included). */
bool strata_engine_run_compiled(const strata_hw *hw, const char *path, const strata_engine_options *opt,
                                strata_results **out, GError **err);

#endif
