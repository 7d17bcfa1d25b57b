/*
 * bench_import_jax.c: `strata import jax-profile` of a 1M-op profile, the
 * writing of its trace against the reading alone; and the trace writer's
 * time formatter against printf (issue 46).
 *
 * Generates a jax.profiler trace of N XLA ops (default 1,000,000) with
 * bench/make_jax_profile.py (durations and timestamps with fractions of a
 * microsecond, as measured ones have), then, in this process, CPU time:
 *   import    baseline: strata_jax_profile_import() and every op of its
 *             stream read (the scan, the device's ops sorted); value: the
 *             same and every op written as trace text to a file, what
 *             `strata import jax-profile` does. Issue 46's hang: the writer
 *             formatted each `time=` and `at=` by trying printf with 1 to 17
 *             digits in each of four units and parsing each back (up to 68
 *             printf and 68 parses a time); on a 1M-op profile that was
 *             over 30 s of a shared core, most of the import.
 *             Target: ratio <= 3 (writing the text costs at most twice the
 *             reading; about 7 with the trial formatter: 71.0 s of CPU for
 *             the CLI's import of the 1M-op profile, which reads in 9.95 s;
 *             2.11 after, 2026-11-24).
 *   format    baseline: the same text by its definition, tried the old way
 *             (bench/time_text_trial.h), of each of the run's times (its
 *             time= and at=, 2 a op, the first 200,000); value:
 *             strata_format_time_exact() of the same times, CPU ns per
 *             time, and printf's "%.17g" of them for scale (one conversion,
 *             the least a round-trip text costs; `printf_ns`). Target 0.5.
 *
 * Usage: bench_import_jax [PROFILE.json] [--ops N] [--reps R]
 * Output: human lines, then
 *   RESULT name=import_jax_1m value=S baseline=S ratio=R target=3 unit=s ops=N
 *   RESULT name=format_time_exact value=NS baseline=NS ratio=R target=0.5 unit=ns times=N printf_ns=NS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "bench_clock.h"
#include "child_run.h"
#include "core/units.h"
#include "time_text_trial.h"
#include "import/jax_profile.h"
#include "trace/writer.h"

/* One import of path: CPU seconds, ops into *n; with out, each op written.
 * times (may be NULL) gets every op's time and at. */
static double import_once(const char *path, FILE *out, uint64_t *n, GArray *times)
{
    double t0 = bench_cpu_seconds();
    GError *err = NULL;
    strata_jax_profile_summary s;
    strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &s, &err);
    if (src == NULL) {
        fprintf(stderr, "bench_import_jax: %s\n", err->message);
        exit(2);
    }
    int64_t count = 0;
    if (out) {
        count = strata_trace_write_to(src, out, "bench", &err);
    } else {
        const strata_op *op;
        while (strata_source_next(src, &op, &err) == 1) {
            count++;
            if (times) {
                g_array_append_val(times, op->time_s);
                g_array_append_val(times, op->at_s);
            }
        }
    }
    if (count < 0 || err) {
        fprintf(stderr, "bench_import_jax: %s\n", err ? err->message : "write failed");
        exit(2);
    }
    strata_source_free(src);
    *n = (uint64_t)count;
    return bench_cpu_seconds() - t0;
}

typedef enum { FORMAT_EXACT, FORMAT_TRIAL, FORMAT_PRINTF } format_way;

/* CPU ns per time of times' first `n`, formatted one way. */
static double format_ns(const GArray *times, guint n, format_way way)
{
    n = n < times->len ? n : times->len;
    double t0 = bench_cpu_seconds();
    size_t chars = 0;
    for (guint i = 0; i < n; i++) {
        double v = g_array_index(times, double, i);
        if (way == FORMAT_PRINTF) {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            chars += (size_t)snprintf(buf, sizeof buf, "%.17g", v);
            continue;
        }
        char *text = way == FORMAT_EXACT ? strata_format_time_exact(v) : bench_time_text_by_trial(v);
        chars += text ? strlen(text) : 0;
        g_free(text);
    }
    volatile size_t sink = chars; /* keeps the loop from being optimized out */
    (void)sink;
    return (bench_cpu_seconds() - t0) * 1e9 / (n ? n : 1);
}

int main(int argc, char **argv)
{
    const char *profile = NULL;
    long ops = 1000000;
    int reps = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
            ops = atol(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0) {
            printf("Usage: bench_import_jax [PROFILE.json] [--ops N] [--reps R]\n"
                   "Times strata's jax-profile import writing its trace against reading it\n"
                   "alone, and the time formatter against printf. Without PROFILE, makes one\n"
                   "of N XLA ops (default 1000000) with bench/make_jax_profile.py. R runs\n"
                   "each, the least CPU time kept (default 1).\n");
            return 0;
        } else
            profile = argv[i];
    }
    reps = reps < 1 ? 1 : reps;
    char *dir = g_dir_make_tmp("strata-bench-jax-XXXXXX", NULL);
    char *generated = NULL;
    if (profile == NULL) {
        generated = g_build_filename(dir, "profile.json", NULL);
        char *helper = g_build_filename(STRATA_SOURCE_DIR, "bench/make_jax_profile.py", NULL);
        char *n = g_strdup_printf("%ld", ops);
        const char *gen[] = {"python3", helper, generated, n, NULL};
        child_usage u = {0};
        printf("generating a profile of %ld XLA ops with %s ...\n", ops, helper);
        if (!child_run(gen, 0, &u)) {
            fprintf(stderr, "bench_import_jax: could not generate the profile (python3 needed)\n");
            return 2;
        }
        g_free(helper);
        g_free(n);
        profile = generated;
    }
    char *trace = g_build_filename(dir, "out.trace", NULL);
    double read_s = 1e300, write_s = 1e300;
    uint64_t n_read = 0, n_written = 0;
    GArray *times = g_array_new(FALSE, FALSE, sizeof(double));
    for (int r = 0; r < reps; r++) {
        double t = import_once(profile, NULL, &n_read, r == 0 ? times : NULL);
        read_s = t < read_s ? t : read_s;
        FILE *out = fopen(trace, "w");
        if (out == NULL) {
            perror(trace);
            return 2;
        }
        t = import_once(profile, out, &n_written, NULL);
        fclose(out);
        write_s = t < write_s ? t : write_s;
    }
    printf("import: %" G_GUINT64_FORMAT " ops; read %.3f s CPU, read and written %.3f s CPU\n", n_written, read_s,
           write_s);
    guint n_times = times->len < 200000 ? times->len : 200000;
    double exact_ns = format_ns(times, n_times, FORMAT_EXACT), trial_ns = format_ns(times, n_times, FORMAT_TRIAL);
    double printf_ns = format_ns(times, n_times, FORMAT_PRINTF);
    printf("format: %u times, strata_format_time_exact %.0f ns each, by trial %.0f ns, printf %%.17g %.0f ns\n",
           n_times, exact_ns, trial_ns, printf_ns);
    printf("RESULT name=import_jax_1m value=%.3f baseline=%.3f ratio=%.3f target=3 unit=s ops=%" G_GUINT64_FORMAT
           "\n", write_s, read_s, write_s / read_s, n_written);
    printf("RESULT name=format_time_exact value=%.0f baseline=%.0f ratio=%.3f target=0.5 unit=ns times=%u "
           "printf_ns=%.0f\n", exact_ns, trial_ns, exact_ns / trial_ns, n_times, printf_ns);
    g_array_free(times, TRUE);
    g_unlink(trace);
    g_free(trace);
    if (generated)
        g_unlink(generated);
    g_free(generated);
    g_rmdir(dir);
    g_free(dir);
    return n_read == n_written ? 0 : 1;
}
