/*
 * bench_validate.c: how well a calibrated model predicts a real run.
 *
 * In one run: `strata calibrate --backend host` (in process), then a
 * copy-dominated trace (a pipeline of host->hbm copies on one stream and
 * hbm->host copies on another, ordered by events, with small computes
 * between) is replayed for real on the host backend (median of 5 runs after
 * a warm-up) and simulated on the calibrated model (SimGrid, once).
 *   value     |makespan_sim - makespan_real| / makespan_real
 *   baseline  the same error for a naive model that runs every op one after
 *             the other at its simulated duration (no overlap of streams)
 *   ratio     baseline / value (how much the simulation beats the naive sum)
 * Target: value <= 0.25 on this noisy, shared machine.
 *
 * Usage: bench_validate [--size SIZE] [--copies N] [--max-size SIZE] [--hw HW.ini]
 * Output: the per-op table of strata validate, then
 *   RESULT name=validate_host_makespan_error value=E baseline=B ratio=R target=0.25 unit=fraction
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/compare.h"
#include "core/units.h"
#include "engine/engine.h"
#include "trace/reader.h"

static char *pipeline_trace(uint64_t size, int copies)
{
    GString *t = g_string_new("strata-trace 1\n# bench_validate: copy-dominated H2D/D2H pipeline\n");
    for (int i = 0; i < copies; i++)
        g_string_append_printf(t, "alloc x%d %" G_GUINT64_FORMAT " host\nalloc y%d %" G_GUINT64_FORMAT
                                  " host\nalloc a%d %" G_GUINT64_FORMAT "\n",
                               i, size, i, size, i, size);
    for (int i = 0; i < copies; i++) {
        g_string_append_printf(t, "copy a%d x%d stream=h2d\nrecord in%d stream=h2d\n", i, i, i);
        g_string_append_printf(t, "wait in%d stream=d2h\ncompute step%d flops=1e5 stream=d2h\n"
                                  "copy y%d a%d stream=d2h\n", i, i, i, i);
    }
    for (int i = 0; i < copies; i++)
        g_string_append_printf(t, "free a%d stream=d2h\n", i);
    return g_string_free(t, FALSE);
}

int main(int argc, char **argv)
{
    char *size_text = NULL, *max_text = NULL, *hw_path = NULL;
    int copies = 6;
    GOptionEntry entries[] = {
        {"size", 0, 0, G_OPTION_ARG_STRING, &size_text, "Bytes per copy (default 64MiB)", "SIZE"},
        {"copies", 0, 0, G_OPTION_ARG_INT, &copies, "Copies per direction (default 6)", "N"},
        {"max-size", 0, 0, G_OPTION_ARG_STRING, &max_text, "Largest copy calibrated (default 256MiB)", "SIZE"},
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
    uint64_t size = UINT64_C(64) << 20;
    strata_calibrate_options copt;
    strata_calibrate_options_init(&copt);
    copt.name = "bench-host";
    if ((size_text && !strata_parse_size(size_text, &size, &err)) ||
        (max_text && !strata_parse_size(max_text, &copt.max_size, &err)) || copies < 1) {
        fprintf(stderr, "bench_validate: %s\n", err ? err->message : "--copies must be at least 1");
        return 2;
    }

    const strata_backend *host = strata_backend_find("host", &err);
    strata_hw *hw = NULL;
    double t0 = (double)g_get_monotonic_time() / 1e6;
    if (hw_path) {
        hw = strata_hw_load(hw_path, NULL, &err);
    } else {
        GString *ini = g_string_new(NULL);
        if (!host->calibrate(&copt, ini, stderr, &err)) {
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
    int fd = g_file_open_tmp("bench-validate-XXXXXX.trace", &trace_path, &err);
    if (fd < 0 || !g_file_set_contents(trace_path, trace_text, -1, &err)) {
        fprintf(stderr, "bench_validate: %s\n", err->message);
        return 2;
    }
    close(fd);
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
    strata_comparison_print(c, stdout);

    double serial = 0;
    for (guint i = 0; i < sim->spans->len; i++) {
        const strata_op_span *s = &g_array_index(sim->spans, strata_op_span, i);
        serial += s->end_s - s->start_s;
    }
    double baseline = fabs(serial - real->makespan_s) / real->makespan_s;
    char *sz = strata_format_size(size);
    printf("trace: %d copies of %s each way on two streams; calibration %.1f s\n", copies, sz, t_cal);
    printf("naive serial model: %.6f s (error %.1f%%)\n", serial, baseline * 100);
    printf("makespan error %.1f%% (target <= 25%%): %s\n", c->makespan_error * 100,
           c->makespan_error <= 0.25 ? "met" : "NOT met");
    printf("RESULT name=validate_host_makespan_error value=%.4f baseline=%.4f ratio=%.2f target=0.25 "
           "unit=fraction\n",
           c->makespan_error, baseline, c->makespan_error > 0 ? baseline / c->makespan_error : 0.0);
    g_free(sz);
    strata_comparison_free(c);
    strata_results_free(real);
    strata_results_free(sim);
    strata_source_free(src);
    g_unlink(trace_path);
    g_free(trace_path);
    g_free(trace_text);
    strata_hw_free(hw);
    g_free(size_text);
    g_free(max_text);
    g_free(hw_path);
    return 0;
}
