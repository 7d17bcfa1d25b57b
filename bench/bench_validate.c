/*
 * bench_validate.c: how well a calibrated model predicts a real run.
 *
 * Each round, in its own process (SimGrid: one engine per process):
 * `strata calibrate --backend host` (in process, copies up to --max-size,
 * default the trace's copy size), then a copy-dominated trace (a pipeline of
 * host->hbm copies on one stream and hbm->host copies on another, ordered by
 * events, with small computes between) is replayed for real on the host
 * backend (median of 5 runs after a warm-up) and simulated on the
 * calibrated model. Over --rounds rounds (default 3) the medians of
 *   value     |makespan_sim - makespan_real| / makespan_real
 *   baseline  the same error for a naive model that runs every op one after
 *             the other at its simulated duration (no overlap of streams)
 * are reported; ratio = baseline / value. Rounds make the figure robust to
 * a shared machine whose load changes between calibration and replay.
 * Target: value <= 0.25 on this noisy, shared machine.
 *
 * Usage: bench_validate [--size SIZE] [--copies N] [--max-size SIZE] [--rounds N] [--hw HW.ini]
 * Output: the per-op table of strata validate, then
 *   RESULT name=validate_host_makespan_error value=E baseline=B ratio=R target=0.25 unit=fraction target_of=value
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/compare.h"
#include "core/units.h"
#include "engine/engine.h"
#include "trace/reader.h"

/* x (host) -> a_i (hbm) on stream h2d, then a_i -> y (host) on stream d2h:
 * 2 + copies buffers of `size`, so large copies stay affordable. */
static char *pipeline_trace(uint64_t size, int copies)
{
    GString *t = g_string_new("strata-trace 1\n# bench_validate: copy-dominated H2D/D2H pipeline\n");
    g_string_append_printf(t, "alloc x %" G_GUINT64_FORMAT " host\nalloc y %" G_GUINT64_FORMAT " host\n", size, size);
    for (int i = 0; i < copies; i++)
        g_string_append_printf(t, "alloc a%d %" G_GUINT64_FORMAT "\n", i, size);
    for (int i = 0; i < copies; i++) {
        g_string_append_printf(t, "copy a%d x stream=h2d\nrecord in%d stream=h2d\n", i, i);
        g_string_append_printf(t, "wait in%d stream=d2h\ncompute step%d flops=1e5 stream=d2h\n"
                                  "copy y a%d stream=d2h\n", i, i, i);
    }
    for (int i = 0; i < copies; i++)
        g_string_append_printf(t, "free a%d stream=d2h\n", i);
    return g_string_free(t, FALSE);
}

/* One round: calibrate (unless hw_path), replay, simulate, compare. Writes
 * "error baseline sim real" to fd. Returns an exit status. */
static int round_main(uint64_t size, int copies, const strata_calibrate_options *copt, const char *hw_path,
                      int fd, bool verbose)
{
    GError *err = NULL;
    const strata_backend *host = strata_backend_find("host", &err);
    strata_hw *hw = NULL;
    double t0 = (double)g_get_monotonic_time() / 1e6;
    if (hw_path) {
        hw = strata_hw_load(hw_path, NULL, &err);
    } else {
        GString *ini = g_string_new(NULL);
        if (!host->calibrate(copt, ini, verbose ? stderr : NULL, &err)) {
            fprintf(stderr, "bench_validate: %s\n", err->message);
            return 2;
        }
        hw = strata_hw_load_data(ini->str, "calibrated", NULL, &err);
        g_string_free(ini, TRUE);
    }
    if (!hw) {
        fprintf(stderr, "bench_validate: %s\n", err->message);
        return 2;
    }
    double t_cal = (double)g_get_monotonic_time() / 1e6 - t0;

    char *trace_text = pipeline_trace(size, copies);
    char *trace_path = NULL;
    int tfd = g_file_open_tmp("bench-validate-XXXXXX.trace", &trace_path, &err);
    if (tfd < 0 || !g_file_set_contents(trace_path, trace_text, -1, &err)) {
        fprintf(stderr, "bench_validate: %s\n", err->message);
        return 2;
    }
    close(tfd);
    strata_source *src = strata_trace_open(trace_path, &err);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    strata_results *real = NULL, *sim = NULL;
    strata_engine_options eopt;
    strata_engine_options_init(&eopt);
    eopt.record_spans = true;
    if (!src || !host->run(hw, src, &opt, &real, &err) || !strata_source_rewind(src, &err) ||
        !strata_engine_run(hw, src, &eopt, &sim, &err)) {
        fprintf(stderr, "bench_validate: %s\n", err->message);
        return 2;
    }
    strata_comparison *c = strata_compare_results(sim, real);
    if (verbose)
        strata_comparison_print(c, stdout);
    double serial = 0;
    for (guint i = 0; i < sim->spans->len; i++) {
        const strata_op_span *s = &g_array_index(sim->spans, strata_op_span, i);
        serial += s->end_s - s->start_s;
    }
    double baseline = fabs(serial - real->makespan_s) / real->makespan_s;
    /* the machine's own noise: the spread of the replay's repeats */
    double lo = 0, hi = 0;
    JsonObject *rep = real->extra ? json_object_get_object_member(real->extra, "replay") : NULL;
    JsonArray *ms = rep ? json_object_get_array_member(rep, "makespans_s") : NULL;
    for (guint i = 0; ms && i < json_array_get_length(ms); i++) {
        double m = json_array_get_double_element(ms, i);
        lo = i == 0 ? m : MIN(lo, m);
        hi = i == 0 ? m : MAX(hi, m);
    }
    double spread = real->makespan_s > 0 ? (hi - lo) / real->makespan_s : 0;
    printf("round: calibration %.1f s; simulated %.6f s, measured %.6f s, error %.1f%%; naive serial %.6f s "
           "(error %.1f%%); per-op |error| p50 %.1f%%; measured repeats %.6f..%.6f s (spread %.0f%% of the "
           "median)\n",
           t_cal, c->makespan_sim_s, c->makespan_real_s, c->makespan_error * 100, serial, baseline * 100,
           c->p50 * 100, lo, hi, spread * 100);
    fflush(stdout);
    char line[256];
    int n = snprintf(line, sizeof line, "%.17g %.17g %.17g %.17g\n", c->makespan_error, baseline,
                     c->makespan_sim_s, c->makespan_real_s);
    bool ok = write(fd, line, (size_t)n) == n;
    strata_comparison_free(c);
    strata_results_free(real);
    strata_results_free(sim);
    strata_source_free(src);
    g_unlink(trace_path);
    g_free(trace_path);
    g_free(trace_text);
    strata_hw_free(hw);
    return ok ? 0 : 2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    char *size_text = NULL, *max_text = NULL, *hw_path = NULL;
    int copies = 4, rounds = 3;
    GOptionEntry entries[] = {
        {"size", 0, 0, G_OPTION_ARG_STRING, &size_text, "Bytes per copy (default 256MiB: larger than the caches, so copies read DRAM)", "SIZE"},
        {"copies", 0, 0, G_OPTION_ARG_INT, &copies, "Copies per direction (default 4)", "N"},
        {"max-size", 0, 0, G_OPTION_ARG_STRING, &max_text, "Largest copy calibrated (default: --size)", "SIZE"},
        {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds of calibrate + validate; medians reported (default 3)",
         "N"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &hw_path, "Use this model instead of calibrating", "HW.ini"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- calibrate, then validate a copy-dominated trace on the host");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, "bench_validate: %s\n", err->message);
        return 2;
    }
    g_option_context_free(ctx);
    uint64_t size = UINT64_C(256) << 20;
    strata_calibrate_options copt;
    strata_calibrate_options_init(&copt);
    copt.name = "bench-host";
    if ((size_text && !strata_parse_size(size_text, &size, &err)) ||
        (max_text && !strata_parse_size(max_text, &copt.max_size, &err)) || copies < 1 || rounds < 1) {
        fprintf(stderr, "bench_validate: %s\n", err ? err->message : "--copies and --rounds must be at least 1");
        return 2;
    }
    if (!max_text)
        copt.max_size = size;

    double *errors = g_new0(double, rounds), *baselines = g_new0(double, rounds);
    for (int r = 0; r < rounds; r++) {
        int fds[2];
        if (pipe(fds) != 0) {
            perror("bench_validate: pipe");
            return 2;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("bench_validate: fork");
            return 2;
        }
        if (pid == 0) {
            close(fds[0]);
            _exit(round_main(size, copies, &copt, hw_path, fds[1], r == 0));
        }
        close(fds[1]);
        char buf[256] = "";
        ssize_t n = read(fds[0], buf, sizeof buf - 1);
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        double sim = 0, real = 0;
        if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
            sscanf(buf, "%lf %lf %lf %lf", &errors[r], &baselines[r], &sim, &real) != 4) {
            fprintf(stderr, "bench_validate: round %d failed\n", r + 1);
            return 2;
        }
    }
    qsort(errors, (size_t)rounds, sizeof(double), cmp_double);
    qsort(baselines, (size_t)rounds, sizeof(double), cmp_double);
    double value = errors[rounds / 2], baseline = baselines[rounds / 2];
    char *sz = strata_format_size(size);
    printf("trace: %d copies of %s each way on two streams; %d rounds\n", copies, sz, rounds);
    printf("makespan error, median of %d rounds: %.1f%% (target <= 25%%): %s; naive serial model: %.1f%%\n", rounds,
           value * 100, value <= 0.25 ? "met" : "NOT met", baseline * 100);
    printf("RESULT name=validate_host_makespan_error value=%.4f baseline=%.4f ratio=%.2f target=0.25 "
           "unit=fraction target_of=value\n",
           value, baseline, value > 0 ? baseline / value : 0.0);
    g_free(sz);
    g_free(errors);
    g_free(baselines);
    g_free(size_text);
    g_free(max_text);
    g_free(hw_path);
    return 0;
}
