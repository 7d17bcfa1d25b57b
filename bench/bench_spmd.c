/*
 * bench_spmd.c: the speed of the SPMD expansion (spmd/spmd.h), ops handed
 * out per CPU second, as the device count grows.
 *
 * For N = 8, 64 and 256 devices (configs/hw/test-ring8.ini with
 * hardware.devices=N), writes an SPMD program of STEPS training-like steps
 * over mesh data:N (per step: an alloc, a compute, a ring all-reduce of
 * 64 MiB, a free) and drains the expansion of it, timing CPU seconds. The
 * baseline is draining the program itself (reading and checking): the
 * ratio is the CPU time per expanded op over the time per program op read
 * (how much dearer an op the expansion makes is than one read). Prints
 *   RESULT name=spmd_N value=NS_PER_OP baseline=NS_PER_READ_OP ratio=R unit=ns ops=OPS ops_per_s=X
 * Usage: bench_spmd [STEPS]
 */
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_clock.h"
#include "hw/hw.h"
#include "spmd/spmd.h"
#include "trace/checked.h"
#include "trace/reader.h"

static char *write_program(uint32_t devices, unsigned steps)
{
    char *path = NULL;
    int fd = g_file_open_tmp("bench-spmd-XXXXXX.trace", &path, NULL);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "strata-trace 1\noption mesh=data:%u\nalloc w 64MiB tag=param dtype=f32\n", devices);
    for (unsigned i = 0; i < steps; i++)
        fprintf(f, "alloc g 64MiB tag=grad dtype=f32\ncompute bwd flops=1e12 in=w out=g\n"
                   "all-reduce g axis=data\nfree g\n");
    fclose(f);
    return path;
}

/* Drains src; returns the ops and sets *cpu to the CPU seconds taken. */
static uint64_t drain(strata_source *src, double *cpu)
{
    double t0 = bench_cpu_seconds();
    const strata_op *op;
    uint64_t n = 0;
    GError *err = NULL;
    int got;
    while ((got = strata_source_next(src, &op, &err)) == 1)
        n++;
    *cpu = bench_cpu_seconds() - t0;
    if (got < 0) {
        fprintf(stderr, "bench_spmd: %s\n", err->message);
        exit(1);
    }
    return n;
}

int main(int argc, char **argv)
{
    unsigned steps = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
    static const uint32_t counts[] = {8, 64, 256};
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
        char set[64];
        g_snprintf(set, sizeof set, "hardware.devices=%u", counts[i]);
        const char *sets[] = {set, NULL};
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/test-ring8.ini", sets, &err);
        if (!hw) {
            fprintf(stderr, "bench_spmd: %s\n", err->message);
            return 1;
        }
        char *path = write_program(counts[i], steps);
        double read_s = 0, expand_s = 0;
        strata_source *plain = strata_checked_source_new(strata_trace_open(path, NULL), NULL);
        uint64_t read_ops = drain(plain, &read_s);
        strata_source_free(plain);
        strata_source *spmd = strata_spmd_expand(strata_trace_open(path, NULL), hw);
        uint64_t ops = drain(spmd, &expand_s);
        strata_source_free(spmd);
        double per_op = ops ? expand_s / (double)ops * 1e9 : 0.0;
        double per_read = read_ops ? read_s / (double)read_ops * 1e9 : 0.0;
        printf("RESULT name=spmd_%u value=%.1f baseline=%.1f ratio=%.2f unit=ns ops=%" G_GUINT64_FORMAT
               " ops_per_s=%.0f\n", counts[i], per_op, per_read, per_read > 0 ? per_op / per_read : 0.0, ops,
               expand_s > 0 ? (double)ops / expand_s : 0.0);
        g_unlink(path);
        g_free(path);
        strata_hw_free(hw);
    }
    return 0;
}
