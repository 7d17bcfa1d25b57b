/*
 * bench_alloc.c: allocator replay against glibc malloc (targets: best-fit
 * at most 1.2x the glibc time on both mixes, every other allocator at most
 * 2x; first-fit at most 2x best-fit).
 *
 * 1. Generates a random trace of N ops (default 2,000,000; deterministic:
 *    a fixed-seed xorshift) into a temporary file: allocs and frees only,
 *    on one stream, one memory. Sizes follow a mix like a training step's:
 *    60% small (256 B to 64 KiB), 30% medium (64 KiB to 2 MiB), 9% large
 *    (2 to 32 MiB), 1% huge (32 to 256 MiB), log-uniform inside each class,
 *    multiples of 4 bytes. The number of live buffers is a random walk
 *    between 1 and 4096; a free takes the newest live buffer half the time
 *    (stack-like temporaries) and a random live one otherwise.
 * 2. Replays the text through the real path of `strata alloc` (reader,
 *    trace checker, allocator, peaks: sim/replay with check_each_op off, as
 *    in Release builds) for best-fit, first-fit, bfc and caching, at a
 *    capacity of 64 GiB (no out-of-memory for any of them).
 * 3. Replays the same text through glibc: getline, tokenising, the size
 *    parsed with strtoull, names mapped to pointers in a GHashTable, then
 *    malloc/free. The pages are never touched, as the model never touches
 *    them either. The baseline is glibc's allocator itself, not the kernel:
 *    mallopt() turns off mmap for large blocks and trimming (with glibc's
 *    defaults every block above 128 KiB..32 MiB is an mmap/munmap pair and
 *    the baseline measures system calls, about 10x slower here). Once, in a
 *    forked child, the same replay also runs with glibc's defaults, reported
 *    for information (RESULT alloc_glibc_default, no target). An untimed
 *    warm-up replay first touches the heap's pages (glibc keeps its
 *    metadata inside the blocks, so a cold heap pays page faults), so the
 *    timed runs measure parsing plus glibc's algorithm.
 * Times are CPU time of this process (CLOCK_PROCESS_CPUTIME_ID): the machine
 * is shared, and wall time measures the other tenants; wall time is printed
 * beside it.
 * 4. Does 2 and 3 again on a second trace of the same length whose sizes
 *    are all small (16 B to 4 KiB, log-uniform): glibc's best case (tcache
 *    and small bins, no large-bin sorting, no page faults), RESULT
 *    alloc_small_NAME. On such a trace the cost of strata's replay is the
 *    reader, the checker's name table and the allocator's own index, and
 *    it shows how close that comes to a bare malloc.
 * 5. Replays best-fit and first-fit on a third trace of 1,350,000 ops with
 *    many holes: small sizes, frees of random live buffers (never
 *    stack-like), allocs slightly more likely than frees up to 65,536 live
 *    buffers, so tens of thousands of free blocks lie scattered over the
 *    heap; a first-fit that walks its free list pays for each of them.
 *    RESULT alloc_first_fit_vs_best_fit: first-fit's time against
 *    best-fit's on it, target 2 (and on the ml mix, informative).
 * Each measurement is the median of REPEATS runs, interleaved so that load
 * on the machine hits all of them alike; the RESULT lines also give the
 * fastest and slowest run of the figure (min=, max=: the spread).
 *
 * Output: a table, and RESULT lines (bench/README.md): alloc_NAME with
 * value = the allocator's replay time, baseline = glibc's.
 * Usage: bench_alloc [N_OPS [REPEATS [ALLOCATOR...]]] (defaults: 2000000, 5,
 * best-fit first-fit bfc caching)
 */
#include <glib.h>
#include <malloc.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_clock.h"
#include "repeats.h"
#include "replay/replay.h"
#include "trace/reader.h"

#define BENCH_CAPACITY (UINT64_C(64) << 30)
#define BENCH_MAX_LIVE 4096
#define BENCH_HOLES_MAX_LIVE 65536
#define BENCH_HOLES_OPS 1350000
#define BENCH_SEED UINT64_C(0x9E3779B97F4A7C15)

/* xorshift64*: deterministic on every platform. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

static double unit_random(uint64_t *state)
{
    return (double)(next_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Log-uniform in [lo, hi), a multiple of 4. */
static uint64_t size_in(uint64_t *state, double lo, double hi)
{
    double v = lo * pow(hi / lo, unit_random(state));
    uint64_t s = (uint64_t)v & ~UINT64_C(3);
    return s ? s : 4;
}

/* The mixes: "ml", a training step's; "small", glibc's best case;
 * "holes", small sizes freed at random among many live buffers. */
typedef enum { MIX_ML, MIX_SMALL, MIX_HOLES } bench_mix;

static const char *const mix_names[] = {"ml", "small", "holes"};

static uint64_t random_size(uint64_t *state, bench_mix mix)
{
    double u = unit_random(state);
    if (mix != MIX_ML)
        return size_in(state, 16.0, 4096.0);
    if (u < 0.60)
        return size_in(state, 256.0, 64.0 * 1024);
    if (u < 0.90)
        return size_in(state, 64.0 * 1024, 2.0 * 1024 * 1024);
    if (u < 0.99)
        return size_in(state, 2.0 * 1024 * 1024, 32.0 * 1024 * 1024);
    return size_in(state, 32.0 * 1024 * 1024, 256.0 * 1024 * 1024);
}

/* Writes the trace; returns the number of ops and the peak of live bytes. */
static uint64_t write_trace(FILE *f, uint64_t n_ops, bench_mix mix, uint64_t *peak_live)
{
    uint64_t rng = BENCH_SEED;
    size_t max_live = mix == MIX_HOLES ? BENCH_HOLES_MAX_LIVE : BENCH_MAX_LIVE;
    uint64_t *live_ids = g_new(uint64_t, max_live), *live_sizes = g_new(uint64_t, max_live);
    size_t n_live = 0;
    uint64_t next_id = 0, ops = 0, live_bytes = 0;
    *peak_live = 0;
    fputs("strata-trace 1\n# bench_alloc: random allocs and frees (deterministic seed)\n", f);
    while (ops < n_ops) {
        /* holes: allocs win 52 of 100 draws, so the live set grows */
        bool coin = mix == MIX_HOLES ? next_random(&rng) % 100 < 52 : (next_random(&rng) & 1);
        bool alloc = n_live == 0 || (n_live < max_live && coin);
        if (alloc) {
            uint64_t size = random_size(&rng, mix);
            fprintf(f, "alloc b%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", next_id, size);
            live_ids[n_live] = next_id++;
            live_sizes[n_live++] = size;
            live_bytes += size;
            if (live_bytes > *peak_live)
                *peak_live = live_bytes;
        } else {
            bool newest = mix != MIX_HOLES && (next_random(&rng) & 1);
            size_t k = newest ? n_live - 1 : (size_t)(next_random(&rng) % n_live);
            fprintf(f, "free b%" G_GUINT64_FORMAT "\n", live_ids[k]);
            live_bytes -= live_sizes[k];
            live_ids[k] = live_ids[n_live - 1];
            live_sizes[k] = live_sizes[n_live - 1];
            n_live--;
        }
        ops++;
    }
    g_free(live_ids);
    g_free(live_sizes);
    return ops;
}

/* The baseline: the same text through glibc malloc/free, parse included. */
static double replay_glibc(const char *path, uint64_t *ops_out, double *wall)
{
    double t0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    GHashTable *live = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint64_t ops = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#' || strncmp(line, "strata-trace", 12) == 0)
            continue;
        char *save = NULL;
        char *verb = strtok_r(line, " \t\n", &save);
        char *name = strtok_r(NULL, " \t\n", &save);
        if (!verb || !name)
            continue;
        if (strcmp(verb, "alloc") == 0) {
            char *size_text = strtok_r(NULL, " \t\n", &save);
            size_t size = size_text ? (size_t)strtoull(size_text, NULL, 10) : 0;
            void *p = malloc(size);
            if (!p) {
                fprintf(stderr, "bench_alloc: glibc malloc(%zu) failed\n", size);
                exit(1);
            }
            g_hash_table_insert(live, g_strdup(name), p);
        } else if (strcmp(verb, "free") == 0) {
            g_hash_table_remove(live, name); /* frees the key and, with free(), the block */
        }
        ops++;
    }
    free(line);
    fclose(f);
    g_hash_table_destroy(live);
    *ops_out = ops;
    *wall = bench_wall_seconds() - w0;
    return bench_cpu_seconds() - t0;
}

/* One replay through strata's path; -1 on error (printed). */
static double replay_strata(const char *path, const char *allocator, strata_replay_summary *sum,
                            double *wall)
{
    double t0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    strata_results *r = NULL;
    strata_replay_options opt = {.allocator = allocator, .capacity = BENCH_CAPACITY};
    bool ok = src && strata_replay_run(src, &opt, &r, sum, &err);
    double t = bench_cpu_seconds() - t0;
    *wall = bench_wall_seconds() - w0;
    strata_results_free(r);
    strata_source_free(src);
    if (!ok) {
        fprintf(stderr, "bench_alloc: %s: %s\n", allocator, err ? err->message : "failed");
        g_clear_error(&err);
        return -1;
    }
    return t;
}

/* The baseline with glibc's default tuning, in a child (mallopt is process-wide). */
static double replay_glibc_default(const char *path)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        uint64_t ops = 0;
        double wall = 0;
        double t = replay_glibc(path, &ops, &wall);
        (void)ops;
        ssize_t w = write(fds[1], &t, sizeof t);
        _exit(w == (ssize_t)sizeof t ? 0 : 1);
    }
    close(fds[1]);
    double t = -1;
    if (pid < 0 || read(fds[0], &t, sizeof t) != (ssize_t)sizeof t)
        t = -1;
    close(fds[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return t;
}

/* Writes a trace of the mix. */
static char *make_trace(uint64_t n_ops, bench_mix mix, uint64_t *ops, uint64_t *peak_live)
{
    char *path = NULL;
    int fd = g_file_open_tmp("bench-alloc-XXXXXX.trace", &path, NULL);
    if (fd < 0) {
        fprintf(stderr, "bench_alloc: cannot create a temporary file\n");
        exit(1);
    }
    FILE *f = fdopen(fd, "w");
    double t0 = bench_wall_seconds();
    *ops = write_trace(f, n_ops, mix, peak_live);
    fclose(f);
    printf("%s mix: wrote %" G_GUINT64_FORMAT " ops to %s in %.2f s; peak live %.1f MiB\n",
           mix_names[mix], *ops, path, bench_wall_seconds() - t0, (double)*peak_live / 1048576.0);
    return path;
}

/* Ratio a[i] / b[i] over the repeats: its smallest and largest. */
static void ratio_spread(const double *a, const double *b, int repeats, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (int i = 0; i < repeats; i++) {
        double r = a[i] / b[i];
        *lo = r < *lo ? r : *lo;
        *hi = r > *hi ? r : *hi;
    }
}

/* The target of an allocator's replay against glibc's. */
static const char *target_of(const char *allocator)
{
    return strcmp(allocator, "best-fit") == 0 ? "1.2" : "2";
}

/* A RESULT line of a median time against a median baseline, with the
 * spread of the per-repeat ratios. */
static void print_result(const char *name, const double *value, const double *baseline, int repeats,
                         const char *target, uint64_t ops)
{
    double v = bench_median(value, repeats), b = bench_median(baseline, repeats), lo, hi;
    ratio_spread(value, baseline, repeats, &lo, &hi);
    printf("RESULT name=%s value=%.3f baseline=%.3f ratio=%.2f target=%s unit=s ops=%" G_GUINT64_FORMAT
           " ratio_min=%.2f ratio_max=%.2f repeats=%d\n", name, v, b, v / b, target, ops, lo, hi, repeats);
}

/* The table of one trace's replays (medians). */
static void print_table(const char *label, uint64_t ops, int repeats, const double *glibc, const double *glibc_wall,
                        double glibc_default, const char *const *allocators, int n_alloc, const double *times,
                        const double *walls, const strata_replay_summary *sums)
{
    double base = bench_median(glibc, repeats);
    printf("\n%s: %" G_GUINT64_FORMAT " ops, capacity %" G_GUINT64_FORMAT " GiB, median of %d runs\n\n", label, ops,
           BENCH_CAPACITY >> 30, repeats);
    printf("| replay | CPU time (s) | wall (s) | M ops/s (CPU) | vs glibc | peak reserved (MiB) | "
           "fragmentation peak |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    printf("| glibc malloc/free (baseline: no mmap, no trim, warm) | %.3f | %.3f | %.2f | 1.00 | - | - |\n", base,
           bench_median(glibc_wall, repeats), (double)ops / base / 1e6);
    if (glibc_default > 0)
        printf("| glibc malloc/free (default tuning, cold, once) | %.3f | - | %.2f | %.2f | - | - |\n",
               glibc_default, (double)ops / glibc_default / 1e6, glibc_default / base);
    for (int a = 0; a < n_alloc; a++) {
        double t = bench_median(&times[a * repeats], repeats);
        printf("| %s | %.3f | %.3f | %.2f | %.2f | %.1f | %.4f |\n", allocators[a], t,
               bench_median(&walls[a * repeats], repeats), (double)ops / t / 1e6, t / base,
               (double)sums[a].peak_reserved / 1048576.0, sums[a].fragmentation_peak);
    }
    printf("\n");
}

/* Replays one trace through glibc and the allocators (median of repeats,
 * interleaved); prints the table and the RESULT lines (targets when
 * with_targets, else informative). times: repeats per allocator, filled.
 * 0 or 1 on failure. */
static int measure(const char *path, uint64_t ops, uint64_t peak_live, const char *label, const char *prefix,
                   int repeats, const char *const *allocators, int n_alloc, double glibc_default, bool with_targets,
                   double *times)
{
    uint64_t warm_ops = 0;
    double warm_wall = 0;
    replay_glibc(path, &warm_ops, &warm_wall); /* warm-up: the heap's pages are touched once, not timed */
    double *glibc = g_new(double, repeats), *glibc_wall = g_new(double, repeats);
    double *walls = g_new(double, (size_t)repeats * (size_t)n_alloc);
    strata_replay_summary *sums = g_new0(strata_replay_summary, n_alloc);
    int status = 0;
    for (int rep = 0; rep < repeats && status == 0; rep++) {
        uint64_t glibc_ops = 0;
        glibc[rep] = replay_glibc(path, &glibc_ops, &glibc_wall[rep]);
        if (glibc[rep] < 0 || glibc_ops != ops) {
            fprintf(stderr, "bench_alloc: glibc replay read %" G_GUINT64_FORMAT " ops\n", glibc_ops);
            status = 1;
        }
        for (int a = 0; a < n_alloc && status == 0; a++) {
            double t = replay_strata(path, allocators[a], &sums[a], &walls[a * repeats + rep]);
            if (t < 0 || sums[a].oom || sums[a].ops != ops || sums[a].peak_allocated != peak_live) {
                fprintf(stderr, "bench_alloc: %s replayed %" G_GUINT64_FORMAT " ops%s, peak %" G_GUINT64_FORMAT
                        " (expected %" G_GUINT64_FORMAT ")\n", allocators[a], sums[a].ops,
                        sums[a].oom ? " (out of memory)" : "", sums[a].peak_allocated, peak_live);
                status = 1;
            }
            times[a * repeats + rep] = t;
        }
    }
    if (status == 0) {
        print_table(label, ops, repeats, glibc, glibc_wall, glibc_default, allocators, n_alloc, times, walls, sums);
        for (int a = 0; a < n_alloc; a++) {
            char *name = g_strdelimit(g_strdup_printf("%s%s", prefix, allocators[a]), "-:,=", '_');
            print_result(name, &times[a * repeats], glibc, repeats, with_targets ? target_of(allocators[a]) : "-",
                         ops);
            g_free(name);
        }
        if (glibc_default > 0) {
            double base = bench_median(glibc, repeats);
            printf("RESULT name=%sglibc_default value=%.3f baseline=%.3f ratio=%.2f target=- unit=s\n", prefix,
                   glibc_default, base, glibc_default / base);
        }
    }
    g_free(glibc);
    g_free(glibc_wall);
    g_free(walls);
    g_free(sums);
    return status;
}

/* Index of allocator `name` in the list, or -1. */
static int allocator_index(const char *const *allocators, int n_alloc, const char *name)
{
    for (int a = 0; a < n_alloc; a++)
        if (strcmp(allocators[a], name) == 0)
            return a;
    return -1;
}

/* First-fit against best-fit on the holes trace (target 2) and, when both
 * ran on it, on the ml mix (informative). */
static int measure_first_fit(int repeats, const char *const *allocators, int n_alloc, const double *ml_times,
                             uint64_t ml_ops)
{
    static const char *const pair[] = {"best-fit", "first-fit"};
    uint64_t ops = 0, peak = 0;
    char *path = make_trace(BENCH_HOLES_OPS, MIX_HOLES, &ops, &peak);
    double *times = g_new(double, (size_t)repeats * 2);
    int status = measure(path, ops, peak, "holes mix (16 B to 4 KiB, random frees, up to 65536 live)",
                         "alloc_holes_", repeats, pair, 2, -1, false, times);
    if (status == 0)
        print_result("alloc_first_fit_vs_best_fit", &times[repeats], times, repeats, "2", ops);
    int bf = allocator_index(allocators, n_alloc, "best-fit"), ff = allocator_index(allocators, n_alloc, "first-fit");
    if (status == 0 && bf >= 0 && ff >= 0)
        print_result("alloc_first_fit_vs_best_fit_ml", &ml_times[ff * repeats], &ml_times[bf * repeats], repeats,
                     "-", ml_ops);
    unlink(path);
    g_free(path);
    g_free(times);
    return status;
}

int main(int argc, char **argv)
{
    uint64_t n_ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (repeats < 1)
        repeats = 1;
    static const char *const default_allocators[] = {"best-fit", "first-fit", "bfc", "caching", NULL};
    const char *const *allocators = argc > 3 ? (const char *const *)&argv[3] : default_allocators;
    int n_alloc = 0;
    while (allocators[n_alloc])
        n_alloc++;

    uint64_t ops = 0, peak_live = 0, small_ops = 0, small_peak = 0;
    char *path = make_trace(n_ops, MIX_ML, &ops, &peak_live);
    char *small = make_trace(n_ops, MIX_SMALL, &small_ops, &small_peak);
    double glibc_default = replay_glibc_default(path);
    mallopt(M_MMAP_MAX, 0);                /* no mmap per large block */
    mallopt(M_TRIM_THRESHOLD, INT_MAX);    /* no trimming of the heap top */
    mallopt(M_TOP_PAD, 64 << 20);          /* grow the heap in large steps */
    double *ml_times = g_new(double, (size_t)repeats * (size_t)n_alloc);
    double *small_times = g_new(double, (size_t)repeats * (size_t)n_alloc);
    int status = measure(path, ops, peak_live, "ml mix (256 B to 256 MiB)", "alloc_", repeats, allocators, n_alloc,
                         glibc_default, true, ml_times);
    if (status == 0)
        status = measure(small, small_ops, small_peak, "small mix (16 B to 4 KiB)", "alloc_small_", repeats,
                         allocators, n_alloc, -1, true, small_times);
    unlink(path);
    unlink(small);
    if (status == 0)
        status = measure_first_fit(repeats, allocators, n_alloc, ml_times, ops);
    g_free(path);
    g_free(small);
    g_free(ml_times);
    g_free(small_times);
    return status;
}
