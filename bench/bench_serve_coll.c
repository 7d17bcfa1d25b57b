/*
 * bench_serve_coll.c: how far serving's interpolated collective times
 * (sim/serve/serve_coll.h: simulated at a grid of two sizes an octave and
 * at the library's switch points, linear between) are from simulating
 * every size, and what they cost.
 *
 * For each configuration (dgx-h100.ini: the all-reduce of T x 8,192 bf16
 * activations, Llama-3-70B's, over 8, 4 and 2 ranks; the reduce-scatter
 * and all-gather of Qwen3-235B's MoE layer under attention DP, TP 8), the
 * step sizes T = 1 .. 8,192 on a fixed sample (every power of two, and
 * 17 T's between each two, odd ones spread evenly: the sizes the runs ask
 * for lie anywhere), first asked of one strata_serve_coll object (the
 * interpolation, its anchors simulated as needed), then each simulated
 * alone (strata_serve_coll_simulate). Prints per configuration the
 * anchors simulated, the largest and median |interpolated / simulated -
 * 1|, and the sizes of the largest.
 *
 * Output: RESULT serve_coll_err_CONFIG value=largest relative error (a
 * fraction), target=0.015 (serve_coll.h and docs/serving.md state it
 * within 1.35% at 17 points an octave); RESULT serve_coll_anchors_CONFIG
 * the anchors simulated.
 * Then, per configuration, every T from 1 to 8,192 asked of a fresh
 * object (what a run whose steps take every size costs): RESULT
 * serve_coll_all_CONFIG value=anchors simulated, with its CPU seconds
 * (this process and its children).
 * Usage: bench_serve_coll [POINTS_PER_OCTAVE] (default 17)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "bench_clock.h"
#include "serve/serve_coll.h"

typedef struct config {
    const char *name;
    strata_op_kind kind;
    uint32_t ranks;
    double bytes_per_token; /* IN per rank per token (an all-gather's share: its rank's tokens) */
} config;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const strata_hw *hw, const config *cf, uint32_t between)
{
    GArray *ts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (uint64_t p = 1; p <= 8192; p *= 2) {
        g_array_append_val(ts, p);
        for (uint32_t i = 1; p < 8192 && i <= between; i++) {
            uint64_t t = p + (p * i) / (between + 1);
            if (t > p && t < 2 * p)
                g_array_append_val(ts, t);
        }
    }
    strata_serve_coll *c = strata_serve_coll_new(hw, cf->ranks);
    GError *err = NULL;
    double *errs = g_new(double, ts->len), worst = 0, wall0 = bench_wall_seconds();
    uint64_t worst_t = 0;
    guint n = 0;
    for (guint i = 0; i < ts->len; i++) {
        uint64_t t = g_array_index(ts, uint64_t, i);
        uint64_t bytes = (uint64_t)((double)t * cf->bytes_per_token);
        bytes = cf->kind == STRATA_OP_REDUCE_SCATTER ? bytes / (2 * cf->ranks) * (2 * cf->ranks) : bytes / 2 * 2;
        double interp = 0, exact = 0;
        if (!bytes)
            continue;
        if (!strata_serve_coll_time(c, cf->kind, bytes, &interp, &err) ||
            !strata_serve_coll_simulate(c, cf->kind, bytes, &exact, &err)) {
            fprintf(stderr, "bench_serve_coll: %s: %s\n", cf->name, err->message);
            g_error_free(err);
            return 1;
        }
        errs[n] = fabs(interp / exact - 1);
        if (errs[n] > worst) {
            worst = errs[n];
            worst_t = t;
        }
        n++;
    }
    uint32_t anchors = strata_serve_coll_simulations(c);
    qsort(errs, n, sizeof *errs, cmp_double);
    printf("%s: %u sizes, %u anchors simulated; |error| median %.4f%%, largest %.4f%% (T = %" G_GUINT64_FORMAT
           "); %.1f s wall with the exact runs\n",
           cf->name, n, anchors, n ? 100 * errs[n / 2] : 0, 100 * worst, worst_t, bench_wall_seconds() - wall0);
    printf("RESULT name=serve_coll_err_%s value=%.6f baseline=- ratio=- target=0.015 unit=fraction\n", cf->name, worst);
    printf("RESULT name=serve_coll_anchors_%s value=%u baseline=- ratio=- target=- unit=runs\n", cf->name, anchors);
    strata_serve_coll_free(c);
    g_free(errs);
    g_array_free(ts, TRUE);
    return 0;
}

static double cpu_with_children(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return bench_cpu_seconds() + (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* Every T of 1 .. 8,192: the anchors and the CPU time they take. */
static int run_all(const strata_hw *hw, const config *cf)
{
    strata_serve_coll *c = strata_serve_coll_new(hw, cf->ranks);
    GError *err = NULL;
    double cpu0 = cpu_with_children(), t = 0;
    for (uint64_t tokens = 1; tokens <= 8192; tokens++) {
        uint64_t bytes = (uint64_t)((double)tokens * cf->bytes_per_token);
        bytes = cf->kind == STRATA_OP_REDUCE_SCATTER ? bytes / (2 * cf->ranks) * (2 * cf->ranks) : bytes / 2 * 2;
        if (bytes && !strata_serve_coll_time(c, cf->kind, bytes, &t, &err)) {
            fprintf(stderr, "bench_serve_coll: %s: %s\n", cf->name, err->message);
            g_error_free(err);
            return 1;
        }
    }
    printf("%s: every T of 1..8192: %u anchors simulated, %.2f s of CPU\n", cf->name,
           strata_serve_coll_simulations(c), cpu_with_children() - cpu0);
    printf("RESULT name=serve_coll_all_%s value=%u baseline=- ratio=- target=- unit=runs\n", cf->name,
           strata_serve_coll_simulations(c));
    strata_serve_coll_free(c);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t between = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 17;
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL, &err);
    if (!hw) {
        fprintf(stderr, "bench_serve_coll: %s\n", err->message);
        return 1;
    }
    /* Llama-3-70B: hidden 8,192 bf16; Qwen3-235B: hidden 4,096, top_k 8, FP8 input + 8-byte ids a token gathered,
     * bf16 reduce-scattered (serve_cost.c moe_collectives), a rank's share of T/8 tokens */
    const config cfs[] = {
        {"ar_tp8", STRATA_OP_ALL_REDUCE, 8, 8192 * 2.0},
        {"ar_tp4", STRATA_OP_ALL_REDUCE, 4, 8192 * 2.0},
        {"ar_tp2", STRATA_OP_ALL_REDUCE, 2, 8192 * 2.0},
        {"rs_tp8", STRATA_OP_REDUCE_SCATTER, 8, 4096 * 2.0},
        {"ag_tp8", STRATA_OP_ALL_GATHER, 8, (4096 + 8 * 8.0) / 8},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof cfs / sizeof cfs[0]; i++)
        rc |= run(hw, &cfs[i], between);
    for (size_t i = 0; i < sizeof cfs / sizeof cfs[0]; i++)
        rc |= run_all(hw, &cfs[i]);
    strata_hw_free(hw);
    return rc;
}
