/*
 * bench_engine.c: the engine's speed against a bare SimGrid program issuing
 * the same activities (targets: at most 1.2x its time on the text trace,
 * 1.1x on the trace compiled beforehand).
 *
 * 1. Writes an N-op trace (default 600,001: 100k copies and 100k computes
 *    over two streams): per step, an alloc on a DMA stream, an H2D copy, a
 *    record, a wait on the compute stream, a compute with flops and an
 *    operand, a free; into a temporary file.
 * 2. In a child process, times the engine as a whole program on it, on
 *    configs/hw/test-simple.ini: loading the model, opening the trace and
 *    strata_engine_run() (reading, checking and binding the file, the
 *    replay of its tape, allocators, accounting, SimGrid), in CPU seconds.
 * 3. In another child, times the bare program (bench/engine_bare.h) the
 *    same way: loading the same model, SimGrid's platform built from it,
 *    one actor per stream and simgrid_run(); its activities are bound into
 *    memory beforehand, untimed (a bare program would have them compiled
 *    in). Process start-up and exit are the same on both sides and left
 *    out.
 * 4. In a third child, times the engine on the same trace compiled
 *    (strata_engine_compile, `strata run --compile-to`: read, checked and
 *    bound to the model beforehand, untimed, as the bare program's
 *    activities are): loading the model and the whole
 *    strata_engine_run_compiled(), the file's reading included.
 * 5. Repeats 2 to 4 REPS times (default 9: on a shared machine one
 *    disturbed repetition moves a median of 5 by several percent), in
 *    turn, and prints the makespans (they must agree) and
 *      RESULT name=engine_ops value=ENGINE_S baseline=BARE_S ratio=R target=1.2 unit=s
 *      RESULT name=engine_ops_compiled value=COMPILED_S baseline=BARE_S ratio=R target=1.1 unit=s
 *    with the medians, the range of the per-repetition ratios, the ratio of
 *    the fastest repetitions (best_ratio: on a machine shared with other
 *    work, interference only adds time, so the fastest runs are the least
 *    disturbed), the range of each side's times (how much the machine
 *    disturbed them) and ops/s as extra fields.
 *
 * SimGrid allows one engine per process, hence the children. CPU time, not
 * wall time, so that a busy shared machine does not skew the ratio.
 * Usage: bench_engine [N_OPS [REPS]]
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "child_run.h"
#include "engine/engine.h"
#include "engine_bare.h"
#include "repeats.h"
#include "trace/reader.h"

static uint64_t write_trace(const char *path, uint64_t n_ops)
{
    FILE *f = child_create(path);
    fputs("strata-trace 1\n# bench_engine: generated\nalloc staging 1MiB host stream=dma\n", f);
    uint64_t ops = 1;
    for (uint64_t i = 0; ops + 6 <= n_ops; i++, ops += 6)
        fprintf(f,
                "alloc b 1MiB stream=dma\ncopy b staging stream=dma\nrecord loaded stream=dma\n"
                "wait loaded\ncompute k flops=1e9 in=b\nfree b\n");
    fclose(f);
    return ops;
}

enum { MAX_REPS = 15 };

int main(int argc, char **argv)
{
    uint64_t n_ops = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 600001;
    int reps = argc > 2 ? CLAMP(atoi(argv[2]), 1, MAX_REPS) : 9;
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "test-simple.ini", NULL);
    char *trace = NULL;
    int fd = g_file_open_tmp("bench-engine-XXXXXX.trace", &trace, NULL);
    if (fd < 0)
        return 1;
    close(fd);
    uint64_t ops = write_trace(trace, n_ops);
    printf("bench_engine: %" G_GUINT64_FORMAT " ops on %s, %d repetitions\n", ops, hw, reps);
    char *compiled = g_strconcat(trace, ".compiled", NULL);
    GError *err = NULL;
    strata_hw *model = strata_hw_load(hw, NULL, &err);
    strata_source *src = model ? strata_trace_open(trace, &err) : NULL;
    FILE *compiled_out = src ? fopen(compiled, "wb") : NULL;
    bool ok = compiled_out && strata_engine_compile(model, src, NULL, compiled, compiled_out, &err);
    if (compiled_out && fclose(compiled_out) != 0)
        ok = false;
    strata_source_free(src);
    strata_hw_free(model);
    if (!ok) {
        fprintf(stderr, "bench_engine: compiling %s: %s\n", trace, err ? err->message : "failed");
        g_clear_error(&err);
    }

    strata_bare_report engine = {0}, bare = {0}, comp = {0};
    double engine_s[MAX_REPS], bare_s[MAX_REPS], ratio[MAX_REPS], comp_s[MAX_REPS], comp_ratio[MAX_REPS];
    for (int r = 0; r < reps && ok; r++) {
        ok = strata_bare_compare(hw, trace, &engine, &bare);
        comp = strata_bare_engine_compiled(hw, compiled);
        ok = ok && comp.ok;
        engine_s[r] = engine.cpu_s;
        bare_s[r] = bare.cpu_s;
        comp_s[r] = comp.cpu_s;
        ratio[r] = bare.cpu_s > 0 ? engine.cpu_s / bare.cpu_s : 0.0;
        comp_ratio[r] = bare.cpu_s > 0 ? comp.cpu_s / bare.cpu_s : 0.0;
        if (ok)
            printf("rep %d: engine %.3f s CPU (%.3f s wall), compiled %.3f s CPU (%.3f s wall), bare SimGrid %.3f s "
                   "CPU (%.3f s wall): %.3fx, compiled %.3fx\n",
                   r + 1, engine.cpu_s, engine.wall_s, comp.cpu_s, comp.wall_s, bare.cpu_s, bare.wall_s, ratio[r],
                   comp_ratio[r]);
    }
    g_remove(trace);
    g_remove(compiled);
    g_free(compiled);
    if (!ok) {
        fprintf(stderr, "bench_engine: a run failed\n");
        return 1;
    }
    printf("engine: %" G_GUINT64_FORMAT " ops, makespan %.9f s\n", engine.ops, engine.makespan_s);
    printf("engine, compiled: %" G_GUINT64_FORMAT " ops, makespan %.9f s\n", comp.ops, comp.makespan_s);
    printf("bare SimGrid: %" G_GUINT64_FORMAT " activities, makespan %.9f s\n", bare.ops, bare.makespan_s);
    double m_engine = bench_median(engine_s, reps), m_bare = bench_median(bare_s, reps),
           m_ratio = bench_median(ratio, reps), lo, hi, fastest_engine, slowest_engine, fastest_bare, slowest_bare;
    bench_range(ratio, reps, &lo, &hi);
    bench_range(engine_s, reps, &fastest_engine, &slowest_engine);
    bench_range(bare_s, reps, &fastest_bare, &slowest_bare);
    printf("RESULT name=engine_ops value=%.3f baseline=%.3f ratio=%.3f target=1.2 unit=s ratio_min=%.3f "
           "ratio_max=%.3f best_ratio=%.3f reps=%d engine_s_min=%.3f engine_s_max=%.3f bare_s_min=%.3f "
           "bare_s_max=%.3f engine_ops_per_s=%.0f makespan_engine=%.9f makespan_bare=%.9f\n",
           m_engine, m_bare, m_ratio, lo, hi, fastest_bare > 0 ? fastest_engine / fastest_bare : 0.0, reps,
           fastest_engine, slowest_engine, fastest_bare, slowest_bare,
           m_engine > 0 ? (double)engine.ops / m_engine : 0.0, engine.makespan_s, bare.makespan_s);
    /* the compiled run against the same bare runs: issue 40's 1.1 is judged on it (docs/engine.md) */
    double m_comp = bench_median(comp_s, reps), m_comp_ratio = bench_median(comp_ratio, reps), fastest_comp,
           slowest_comp;
    bench_range(comp_ratio, reps, &lo, &hi);
    bench_range(comp_s, reps, &fastest_comp, &slowest_comp);
    printf("RESULT name=engine_ops_compiled value=%.3f baseline=%.3f ratio=%.3f target=1.1 unit=s ratio_min=%.3f "
           "ratio_max=%.3f best_ratio=%.3f reps=%d engine_s_min=%.3f engine_s_max=%.3f makespan_engine=%.9f "
           "makespan_bare=%.9f\n",
           m_comp, m_bare, m_comp_ratio, lo, hi, fastest_bare > 0 ? fastest_comp / fastest_bare : 0.0, reps,
           fastest_comp, slowest_comp, comp.makespan_s, bare.makespan_s);
    g_free(trace);
    g_free(hw);
    return 0;
}
