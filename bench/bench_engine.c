/*
 * bench_engine.c: the engine's speed against a bare SimGrid program issuing
 * the same activities (issue 8: at most 1.5x its time).
 *
 * 1. Writes an N-op trace (default 1,200,000): per step, an alloc on a DMA
 *    stream, an H2D copy, a record, a wait on the compute stream, a compute
 *    with flops and an operand, a free; into a temporary file.
 * 2. In a child process, times strata_engine_run() on it on
 *    configs/hw/test-simple.ini: everything the engine does (two passes over
 *    the file, checking, allocators, accounting, SimGrid), in CPU seconds.
 * 3. In another child, times the bare program (sim/engine/engine_bare.h):
 *    the same activities resolved into memory beforehand, then simgrid_run()
 *    alone on the same platform.
 * 4. Prints both makespans (they must agree) and
 *      RESULT name=engine_ops value=ENGINE_S baseline=BARE_S ratio=R target=1.5 unit=s
 *    with ops/s as extra fields.
 *
 * SimGrid allows one engine per process, hence the children. CPU time, not
 * wall time, so that a busy shared machine does not skew the ratio.
 * Usage: bench_engine [N_OPS]
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "engine/engine.h"
#include "engine/engine_bare.h"
#include "hw/hw.h"
#include "trace/reader.h"

typedef struct child_report {
    int ok;
    double cpu_s, wall_s, makespan_s;
    uint64_t ops;
} child_report;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t write_trace(const char *path, uint64_t n_ops)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs("strata-trace 1\n# bench_engine: generated\nalloc staging 1MiB host stream=dma\n", f);
    uint64_t ops = 1;
    for (uint64_t i = 0; ops + 6 <= n_ops; i++, ops += 6)
        fprintf(f,
                "alloc b 1MiB stream=dma\ncopy b staging stream=dma\nrecord loaded stream=dma\n"
                "wait loaded\ncompute k flops=1e9 in=b\nfree b\n");
    fclose(f);
    return ops;
}

static void run_engine(const char *hw_path, const char *trace, child_report *rep)
{
    GError *err = NULL;
    double c0 = cpu_seconds(), w0 = wall_seconds();
    strata_hw *hw = strata_hw_load(hw_path, NULL, &err);
    strata_source *src = hw ? strata_trace_open(trace, &err) : NULL;
    strata_results *r = NULL;
    if (src && strata_engine_run(hw, src, NULL, &r, &err)) {
        rep->cpu_s = cpu_seconds() - c0;
        rep->wall_s = wall_seconds() - w0;
        rep->makespan_s = r->makespan_s;
        rep->ops = r->ops;
        rep->ok = 1;
    } else {
        fprintf(stderr, "engine: %s\n", err ? err->message : "failed");
    }
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
    g_clear_error(&err);
}

static void run_bare(const char *hw_path, const char *trace, child_report *rep)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(hw_path, NULL, &err);
    strata_source *src = hw ? strata_trace_open(trace, &err) : NULL;
    strata_bare_timing t = {0};
    if (src && strata_engine_run_bare(hw, src, &t, &err)) {
        rep->cpu_s = t.run_cpu_s;
        rep->wall_s = t.run_wall_s;
        rep->makespan_s = t.makespan_s;
        rep->ops = t.activities;
        rep->ok = 1;
    } else {
        fprintf(stderr, "bare: %s\n", err ? err->message : "failed");
    }
    strata_source_free(src);
    strata_hw_free(hw);
    g_clear_error(&err);
}

/* Runs fn in a child process and returns its report through a pipe. */
static child_report in_child(void (*fn)(const char *, const char *, child_report *), const char *hw,
                             const char *trace)
{
    child_report rep = {0};
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        fn(hw, trace, &rep);
        ssize_t w = write(fds[1], &rep, sizeof rep);
        _exit(w == (ssize_t)sizeof rep ? 0 : 1);
    }
    close(fds[1]);
    if (read(fds[0], &rep, sizeof rep) != (ssize_t)sizeof rep)
        rep.ok = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return rep;
}

int main(int argc, char **argv)
{
    uint64_t n_ops = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 1200000;
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "test-simple.ini", NULL);
    char *trace = NULL;
    int fd = g_file_open_tmp("bench-engine-XXXXXX.trace", &trace, NULL);
    if (fd < 0)
        return 1;
    close(fd);
    uint64_t ops = write_trace(trace, n_ops);
    printf("bench_engine: %" G_GUINT64_FORMAT " ops on %s\n", ops, hw);

    child_report engine = in_child(run_engine, hw, trace);
    child_report bare = in_child(run_bare, hw, trace);
    g_remove(trace);
    if (!engine.ok || !bare.ok) {
        fprintf(stderr, "bench_engine: a run failed\n");
        return 1;
    }
    printf("engine: %" G_GUINT64_FORMAT " ops in %.3f s CPU (%.3f s wall), makespan %.9f s\n", engine.ops,
           engine.cpu_s, engine.wall_s, engine.makespan_s);
    printf("bare SimGrid: %" G_GUINT64_FORMAT " activities in %.3f s CPU (%.3f s wall), makespan %.9f s\n",
           bare.ops, bare.cpu_s, bare.wall_s, bare.makespan_s);
    double ratio = bare.cpu_s > 0 ? engine.cpu_s / bare.cpu_s : 0.0;
    printf("RESULT name=engine_ops value=%.3f baseline=%.3f ratio=%.3f target=1.5 unit=s "
           "engine_ops_per_s=%.0f makespan_engine=%.9f makespan_bare=%.9f\n",
           engine.cpu_s, bare.cpu_s, ratio, engine.cpu_s > 0 ? (double)engine.ops / engine.cpu_s : 0.0,
           engine.makespan_s, bare.makespan_s);
    g_free(trace);
    g_free(hw);
    return 0;
}
