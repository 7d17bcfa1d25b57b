/*
 * bench_import.c: `strata import torch` against Python unpickling the same
 * file, in time and in memory.
 *
 * Generates a snapshot-shaped pickle of at least 60 MB with
 * tests/helpers/make_snapshot.py (scenario `big`, protocol 4), then, in the
 * same run and on the same file:
 *   time      baseline: python3 -c "import pickle; pickle.load(open(f, 'rb'))"
 *             (just unpickling: no conversion at all); value: the whole
 *             import, mmap + safe parse + conversion + writing the trace
 *             file (strata_torch_import() and the trace writer), in this
 *             process. Each is run `reps` times, the best time kept (the
 *             machine may be shared). Target (bench/README.md convention,
 *             lower is better): ratio = value / baseline <= 0.5, i.e. the
 *             import at least 2x faster.
 *   memory    the peak RSS of `strata import torch SNAP -o OUT` run as a
 *             child (wait4's ru_maxrss), against the file's size (the
 *             whole-document parser needed 4.3x). It includes a floor that
 *             does not depend on the input: `strata --version` alone (the
 *             shared libraries strata links) peaks at about 34 MiB; the
 *             line gives it (floor=) and the rest (above_floor=). python3's
 *             peak RSS while unpickling is printed for comparison.
 *   growth    bench/grow_snapshot.py makes the same snapshot --grow times
 *             bigger (device 0's first 1000 events repeated, Python-valid);
 *             on it the peak RSS must be at most half the file (target
 *             0.5) and must stay flat: RSS(big) / RSS(small) <= 1.25.
 *
 * Usage: bench_import [SNAPSHOT.pickle] [--size-mb M] [--reps N] [--grow K]
 * Output: human lines, then
 *   RESULT name=import_torch value=S baseline=S ratio=R target=0.5 unit=s
 *   RESULT name=import_torch_rss value=MiB baseline=MiB ratio=R target=- unit=MiB floor=.. above_floor=..
 *   RESULT name=import_torch_rss_grown value=MiB baseline=MiB ratio=R target=0.5 unit=MiB
 *   RESULT name=import_torch_rss_growth value=X baseline=- ratio=- target=1.25 unit=fraction
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "core/outfile.h"
#include "child_run.h"
#include "import/torch.h"
#include "trace/writer.h"

static double now_s(void) { return (double)g_get_monotonic_time() / 1e6; }

/* Runs argv (searched in PATH) with standard output to /dev/null: its wall
 * time and peak RSS in MiB. False unless it exits 0. */
static bool run_child(const char *const *argv, double *seconds, double *rss_mib)
{
    child_usage u = {0};
    bool ok = child_run(argv, 0, &u);
    *seconds = u.wall_s;
    if (rss_mib)
        *rss_mib = u.rss_mib;
    return ok;
}

static double file_mib(const char *path)
{
    GStatBuf st;
    return g_stat(path, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : 0;
}

static bool run_import(const char *snapshot, const char *out_path, double *seconds,
                       uint64_t *n_ops)
{
    double t0 = now_s();
    GError *err = NULL;
    strata_outfile *out = strata_outfile_open(out_path, &err);
    strata_torch_options opt;
    strata_torch_options_init(&opt);
    strata_torch_summary sum = {0};
    strata_source *src = out ? strata_torch_import(snapshot, &opt, &sum, &err) : NULL;
    if (src == NULL) {
        fprintf(stderr, "bench_import: %s\n", err->message);
        g_clear_error(&err);
        strata_outfile_abort(out);
        return false;
    }
    int64_t written = strata_torch_write(src, strata_outfile_stream(out), "bench", &err);
    *n_ops = written > 0 ? (uint64_t)written : 0;
    bool ok = written >= 0 && strata_outfile_commit(out, &err);
    if (!ok) {
        fprintf(stderr, "bench_import: %s\n", err ? err->message : "write failed");
        g_clear_error(&err);
    }
    strata_source_free(src);
    strata_torch_summary_clear(&sum);
    *seconds = now_s() - t0;
    return ok;
}

int main(int argc, char **argv)
{
    const char *snapshot = NULL;
    double size_mb = 60.0;
    int reps = 3;
    double grow = 5.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size-mb") == 0 && i + 1 < argc)
            size_mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--grow") == 0 && i + 1 < argc)
            grow = atof(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0) {
            printf("Usage: bench_import [SNAPSHOT.pickle] [--size-mb M] [--reps N] [--grow K]\n"
                   "Times strata's torch import against python3 unpickling the same file,\n"
                   "and measures its peak RSS on it and on a copy K times bigger (default\n"
                   "5; 0: none). Without SNAPSHOT, generates one of M MB (default 60) with\n"
                   "tests/helpers/make_snapshot.py. N runs each, best kept (default 3).\n");
            return 0;
        } else
            snapshot = argv[i];
    }
    if (reps < 1)
        reps = 1;
    char *dir = g_dir_make_tmp("strata-bench-import-XXXXXX", NULL);
    char *generated = NULL;
    if (snapshot == NULL) {
        generated = g_build_filename(dir, "big.pickle", NULL);
        char *helper = g_build_filename(STRATA_SOURCE_DIR, "tests/helpers/make_snapshot.py", NULL);
        char *mb = g_strdup_printf("%g", size_mb);
        const char *gen[] = {"python3", helper, generated, "--scenario", "big", "--protocol", "4",
                             "--size-mb", mb, NULL};
        double t;
        printf("generating a %g MB snapshot with %s ...\n", size_mb, helper);
        if (!run_child(gen, &t, NULL)) {
            fprintf(stderr, "bench_import: could not generate the snapshot (python3 needed)\n");
            return 2;
        }
        g_free(helper);
        g_free(mb);
        snapshot = generated;
    }
    GStatBuf st;
    if (g_stat(snapshot, &st) != 0) {
        fprintf(stderr, "bench_import: %s: cannot stat\n", snapshot);
        return 2;
    }
    printf("snapshot: %s, %.1f MB\n", snapshot, (double)st.st_size / 1e6);

    char *trace = g_build_filename(dir, "out.trace", NULL);
    const char *py[] = {"python3", "-c",
                        "import pickle, sys; pickle.load(open(sys.argv[1], 'rb'))", snapshot,
                        NULL};
    double best_py = 1e30, best_import = 1e30, py_rss = 0;
    uint64_t n_ops = 0;
    for (int r = 0; r < reps; r++) {
        double t, rss;
        if (!run_child(py, &t, &rss))
            return 2;
        if (t < best_py)
            best_py = t;
        py_rss = rss;
        if (!run_import(snapshot, trace, &t, &n_ops))
            return 2;
        if (t < best_import)
            best_import = t;
        printf("run %d: python3 unpickle %.3f s, strata import %.3f s\n", r + 1, best_py, t);
    }
    GStatBuf tst;
    g_stat(trace, &tst);
    printf("strata import wrote %" G_GUINT64_FORMAT " ops (%.1f MB of trace)\n", n_ops,
           (double)tst.st_size / 1e6);
    printf("speed-up: %.2fx (target: at least 2x)\n", best_py / best_import);
    printf("RESULT name=import_torch value=%.3f baseline=%.3f ratio=%.3f target=0.5 unit=s\n",
           best_import, best_py, best_import / best_py);

    /* Memory: the CLI as a child, on this file and on a bigger copy. */
    char *self_dir = g_path_get_dirname(argv[0]);
    char *strata = g_build_filename(self_dir, "strata", NULL);
    const char *floor_argv[] = {strata, "--version", NULL};
    const char *imp[] = {strata, "import", "torch", snapshot, "-o", trace, NULL};
    double t, floor_rss = 0, rss = 0;
    if (!run_child(floor_argv, &t, &floor_rss) || !run_child(imp, &t, &rss))
        return 2;
    double mib = file_mib(snapshot);
    printf("peak RSS: strata import %.1f MiB for a %.1f MiB snapshot (strata --version: %.1f "
           "MiB; python3 pickle.load: %.1f MiB)\n",
           rss, mib, floor_rss, py_rss);
    printf("RESULT name=import_torch_rss value=%.1f baseline=%.1f ratio=%.3f target=- "
           "unit=MiB floor=%.1f above_floor=%.1f\n",
           rss, mib, rss / mib, floor_rss, rss - floor_rss);
    if (grow > 1) {
        char *big = g_build_filename(dir, "grown.pickle", NULL);
        char *grower = g_build_filename(STRATA_SOURCE_DIR, "bench/grow_snapshot.py", NULL);
        char *target_mb = g_strdup_printf("%.0f", grow * mib * 1.048576);
        const char *grow_argv[] = {"python3", grower, snapshot, big, target_mb, NULL};
        const char *imp_big[] = {strata, "import", "torch", big, "-o", trace, NULL};
        double big_rss = 0, big_t = 0;
        printf("growing it %gx with %s ...\n", grow, grower);
        if (!run_child(grow_argv, &t, NULL) || !run_child(imp_big, &big_t, &big_rss))
            return 2;
        double big_mib = file_mib(big);
        printf("peak RSS: strata import %.1f MiB for a %.1f MiB snapshot (%.2f s)\n", big_rss,
               big_mib, big_t);
        printf("RESULT name=import_torch_rss_grown value=%.1f baseline=%.1f ratio=%.3f "
               "target=0.5 unit=MiB\n",
               big_rss, big_mib, big_rss / big_mib);
        printf("RESULT name=import_torch_rss_growth value=%.3f baseline=- ratio=- target=1.25 "
               "unit=fraction file_growth=%.2f\n",
               big_rss / rss, big_mib / mib);
        g_unlink(big);
        g_free(big);
        g_free(grower);
        g_free(target_mb);
    }
    g_free(strata);
    g_free(self_dir);
    g_unlink(trace);
    if (generated)
        g_unlink(generated);
    g_rmdir(dir);
    g_free(trace);
    g_free(generated);
    g_free(dir);
    return 0;
}
