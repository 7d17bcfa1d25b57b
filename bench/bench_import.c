/*
 * bench_import.c: `strata import torch` against Python unpickling the same file.
 *
 * Generates a snapshot-shaped pickle of at least 60 MB with
 * tests/helpers/make_snapshot.py (scenario `big`, protocol 4), then times, in
 * the same run and on the same file:
 *   baseline  python3 -c "import pickle; pickle.load(open(f, 'rb'))"
 *             (just unpickling: no conversion at all);
 *   value     the whole import: mmap + safe parse + conversion + writing the
 *             trace file (strata_torch_import() and the trace writer).
 * Each is run `reps` times and the best time is kept (the machine may be
 * shared). Target (bench/README.md convention, lower is better):
 * ratio = value / baseline <= 0.5, i.e. the import at least 2x faster.
 *
 * Usage: bench_import [SNAPSHOT.pickle] [--size-mb M] [--reps N]
 * Output: human lines, then
 *   RESULT name=import_torch value=S baseline=S ratio=R target=0.5 unit=s
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "core/outfile.h"
#include "import/torch.h"
#include "trace/writer.h"

static double now_s(void) { return (double)g_get_monotonic_time() / 1e6; }

static bool run_python(const char *const *argv, double *seconds)
{
    double t0 = now_s();
    int status = 0;
    GError *err = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
                      &status, &err)) {
        fprintf(stderr, "bench_import: %s\n", err->message);
        g_clear_error(&err);
        return false;
    }
    *seconds = now_s() - t0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
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
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size-mb") == 0 && i + 1 < argc)
            size_mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0) {
            printf("Usage: bench_import [SNAPSHOT.pickle] [--size-mb M] [--reps N]\n"
                   "Times strata's torch import against python3 unpickling the same file.\n"
                   "Without SNAPSHOT, generates one of M MB (default 60) with\n"
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
        fflush(stdout);
        if (!run_python(gen, &t)) {
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
    double best_py = 1e30, best_import = 1e30;
    uint64_t n_ops = 0;
    for (int r = 0; r < reps; r++) {
        double t;
        if (!run_python(py, &t))
            return 2;
        if (t < best_py)
            best_py = t;
        if (!run_import(snapshot, trace, &t, &n_ops))
            return 2;
        if (t < best_import)
            best_import = t;
        printf("run %d: python3 unpickle %.3f s, strata import %.3f s\n", r + 1, best_py, t);
        fflush(stdout);
    }
    GStatBuf tst;
    g_stat(trace, &tst);
    printf("strata import wrote %" G_GUINT64_FORMAT " ops (%.1f MB of trace)\n", n_ops,
           (double)tst.st_size / 1e6);
    printf("speed-up: %.2fx (target: at least 2x)\n", best_py / best_import);
    printf("RESULT name=import_torch value=%.3f baseline=%.3f ratio=%.3f target=0.5 unit=s\n",
           best_import, best_py, best_import / best_py);
    g_unlink(trace);
    if (generated)
        g_unlink(generated);
    g_rmdir(dir);
    g_free(trace);
    g_free(generated);
    g_free(dir);
    return 0;
}
