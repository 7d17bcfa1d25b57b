/*
 * bench_offline.c: the offline planner at scale and on MiniMalloc's
 * challenging set.
 *
 * 1. Scale: `strata gen transformer layers=L` for L = 100, 300, 1000 and
 *    3000 (6.6k, 20k, 66k and 198k buffers), each replayed through
 *    `offline` by the real path of `strata alloc` (reader, trace checker,
 *    planner, replay; sim/replay). RESULT offline_bufs_N: the CPU time of
 *    the replay (planning included), target 60 s for the largest (the
 *    others are informative); the height over the lower bound is printed
 *    beside it.
 * 2. Quality: each file of ../shared/data/minimalloc A..K (capacity
 *    1048576) through `offline` at its default budget, alignment 1: RESULT
 *    offline_mm_X, the planned height over the lower bound (the peak of
 *    live bytes), target 1.05; RESULT offline_mm_X_time, its CPU time,
 *    target 10 s. Skipped with a message when the data is absent.
 * Times are CPU time of this process (the machine may be shared; wall time
 * is printed beside it). There is no baseline in the same run: the targets
 * bound the values themselves.
 * Usage: bench_offline [MAX_LAYERS]   (default 3000)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_clock.h"
#include "import/minimalloc.h"
#include "replay/replay.h"
#include "trace/reader.h"

#define BENCH_SCALE_TARGET_S 60.0
#define BENCH_MM_RATIO_TARGET 1.05
#define BENCH_MM_TIME_TARGET_S 10.0

typedef struct bench_run {
    double cpu, wall;
    strata_replay_summary sum;
} bench_run;

/* Replays src through `offline` at capacity; false on an error (printed). */
static bool bench_plan(strata_source *src, uint64_t capacity, uint64_t alignment, bench_run *out)
{
    strata_replay_options opt = {.allocator = "offline", .capacity = capacity,
                                 .alignment = alignment, .ignore_device_limit = true};
    strata_results *r = NULL;
    GError *err = NULL;
    double c0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    bool ok = src && strata_replay_run(src, &opt, &r, &out->sum, &err);
    out->cpu = bench_cpu_seconds() - c0;
    out->wall = bench_wall_seconds() - w0;
    if (!ok)
        fprintf(stderr, "bench_offline: %s\n", err ? err->message : "no source");
    g_clear_error(&err);
    strata_results_free(r);
    return ok && !out->sum.oom;
}

static double bench_ratio(const strata_replay_summary *s)
{
    return s->plan_lower_bound ? (double)s->planned_height / (double)s->plan_lower_bound : 1.0;
}

/* The number of allocs in the trace at path. */
static unsigned bench_count_allocs(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    unsigned n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strncmp(line, "alloc ", 6) == 0;
    if (f)
        fclose(f);
    return n;
}

/* Generates the transformer step of `layers` layers with ./strata gen. */
static char *bench_generate(unsigned layers)
{
    char *path = NULL;
    int fd = g_file_open_tmp("bench-offline-XXXXXX.trace", &path, NULL);
    if (fd < 0)
        return NULL;
    close(fd);
    char *arg = g_strdup_printf("layers=%u", layers);
    char *argv[] = {"./strata", "gen", "transformer", arg, "-o", path, NULL};
    gint status = 1;
    GError *err = NULL;
    if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, &err) ||
        status != 0) {
        fprintf(stderr, "bench_offline: ./strata gen transformer %s failed%s%s\n", arg,
                err ? ": " : "", err ? err->message : "");
        g_clear_error(&err);
        g_unlink(path);
        g_free(path);
        path = NULL;
    }
    g_free(arg);
    return path;
}

static bool bench_scale(unsigned max_layers)
{
    static const unsigned layers[] = {100, 300, 1000, 3000};
    bool ok = true;
    printf("%-8s %10s %10s %10s %12s\n", "layers", "buffers", "cpu (s)", "wall (s)", "height/lb");
    for (size_t i = 0; i < G_N_ELEMENTS(layers) && layers[i] <= max_layers; i++) {
        char *path = bench_generate(layers[i]);
        unsigned buffers = path ? bench_count_allocs(path) : 0;
        bench_run run;
        strata_source *src = path ? strata_trace_open(path, NULL) : NULL;
        bool planned = bench_plan(src, UINT64_C(1) << 50, 0, &run);
        strata_source_free(src);
        if (path)
            g_unlink(path);
        g_free(path);
        if (!planned) {
            ok = false;
            continue;
        }
        bool last = i + 1 == G_N_ELEMENTS(layers) || layers[i + 1] > max_layers;
        printf("%-8u %10u %10.2f %10.2f %12.6f\n", layers[i], buffers, run.cpu, run.wall,
               bench_ratio(&run.sum));
        printf("RESULT name=offline_bufs_%u value=%.3f baseline=- ratio=- target=%s unit=s "
               "wall_s=%.3f height_over_lower_bound=%.6f\n", buffers, run.cpu,
               last ? G_STRINGIFY(BENCH_SCALE_TARGET_S) : "-", run.wall, bench_ratio(&run.sum));
    }
    return ok;
}

static bool bench_minimalloc(void)
{
    char *dir = g_build_filename(STRATA_SOURCE_DIR, "..", "shared", "data", "minimalloc", NULL);
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        printf("bench_offline: %s is absent: the challenging set is skipped\n", dir);
        g_free(dir);
        return true;
    }
    bool ok = true;
    printf("\n%-4s %10s %10s %10s %10s %10s\n", "file", "lower", "height", "ratio", "cpu (s)",
           "wall (s)");
    for (char f = 'A'; f <= 'K'; f++) {
        char *name = g_strdup_printf("%c.1048576.csv", f);
        char *path = g_build_filename(dir, name, NULL);
        bench_run run;
        strata_source *src = strata_minimalloc_source(path, NULL);
        bool planned = bench_plan(src, UINT64_C(1) << 30, 1, &run);
        strata_source_free(src);
        if (planned) {
            printf("%-4c %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT " %10.4f %10.2f %10.2f\n", f,
                   run.sum.plan_lower_bound, run.sum.planned_height, bench_ratio(&run.sum),
                   run.cpu, run.wall);
            printf("RESULT name=offline_mm_%c value=%.4f baseline=- ratio=- target=%.2f "
                   "unit=fraction height=%" G_GUINT64_FORMAT " lower_bound=%" G_GUINT64_FORMAT "\n",
                   f, bench_ratio(&run.sum), BENCH_MM_RATIO_TARGET, run.sum.planned_height,
                   run.sum.plan_lower_bound);
            printf("RESULT name=offline_mm_%c_time value=%.3f baseline=- ratio=- target=%.0f "
                   "unit=s wall_s=%.3f\n", f, run.cpu, BENCH_MM_TIME_TARGET_S, run.wall);
        } else {
            ok = false;
        }
        g_free(name);
        g_free(path);
    }
    g_free(dir);
    return ok;
}

int main(int argc, char **argv)
{
    unsigned max_layers = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3000;
    bool ok = bench_scale(max_layers);
    ok = bench_minimalloc() && ok;
    return ok ? 0 : 1;
}
