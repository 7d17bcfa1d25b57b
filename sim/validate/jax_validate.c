/*
 * jax_validate.c: a jax.profiler trace against the simulator (contract in
 * jax_validate.h).
 */
#include "validate/jax_validate.h"
#include <string.h>
#include "engine/engine.h"
#include "import/jax_profile.h"
#include "results/results.h"

enum { K_COPY, K_COLLECTIVE, K_OP, K__COUNT };
static const char *const kind_names[K__COUNT] = {"copy", "collective", "op"};

static int kind_of(const char *note)
{
    for (int k = 0; k < K__COUNT; k++)
        if (note && strcmp(note, kind_names[k]) == 0)
            return k;
    return K_OP;
}

static double error_of(double sim, double real)
{
    return real > 0 ? (sim - real) / real : 0;
}

bool strata_jax_validate(const char *path, const strata_hw *hw, strata_jax_validation *v, GError **err)
{
    memset(v, 0, sizeof *v);
    strata_jax_profile_summary s;
    strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &s, err);
    if (src == NULL)
        return false;
    /* The measured durations per kind, from the imported ops (the file's dur). */
    double measured[K__COUNT] = {0}, simulated[K__COUNT] = {0};
    uint64_t n[K__COUNT] = {0};
    const strata_op *op;
    int got;
    GArray *kinds = g_array_new(FALSE, FALSE, sizeof(int));
    while ((got = strata_source_next(src, &op, err)) == 1) {
        int k = op->kind == STRATA_OP_COMPUTE ? kind_of(op->note) : -1; /* records and waits of threads: no op */
        g_array_append_val(kinds, k);
        if (k >= 0) {
            measured[k] += op->time_s;
            n[k]++;
        }
    }
    strata_results *r = NULL;
    bool ok = got == 0 && strata_source_rewind(src, err);
    if (ok) {
        strata_engine_options eopt;
        strata_engine_options_init(&eopt);
        eopt.record_spans = true;
        ok = strata_engine_run(hw, src, &eopt, &r, err);
    }
    if (ok) {
        /* A span's op index is the index of its op in the stream (records
         * and waits between threads included, kind -1). */
        for (guint i = 0; r->spans && i < r->spans->len; i++) {
            const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
            int k = sp->kind == STRATA_OP_COMPUTE && sp->op_index < kinds->len ? g_array_index(kinds, int, sp->op_index)
                                                                                : -1;
            if (k >= 0)
                simulated[k] += sp->end_s - sp->start_s;
        }
        v->oom = r->oom;
        v->measured_span_s = s.span_s;
        v->simulated_makespan_s = r->makespan_s;
        GString *t = g_string_new(NULL);
        g_string_printf(t, "%s on %s: device %d of %u, %" G_GUINT64_FORMAT " XLA ops at their measured times%s\n",
                        path, strata_hw_name(hw), s.device, s.n_devices, s.n_ops,
                        s.n_threads > 1 ? ", each thread a stream (overlapping ops overlap)" : "");
        g_string_append_printf(t, "%-11s %8s %16s %16s %9s\n", "ops", "n", "measured", "simulated", "error");
        for (int c = 0; c < K__COUNT; c++) {
            v->measured_busy_s += measured[c];
            v->simulated_busy_s += simulated[c];
            g_string_append_printf(t, "%-11s %8" G_GUINT64_FORMAT " %13.3f us %13.3f us %+8.2f%%\n", kind_names[c],
                                   n[c], measured[c] * 1e6, simulated[c] * 1e6,
                                   100.0 * error_of(simulated[c], measured[c]));
        }
        g_string_append_printf(t, "%-11s %8" G_GUINT64_FORMAT " %13.3f us %13.3f us %+8.2f%%\n", "all",
                               s.n_ops, v->measured_busy_s * 1e6, v->simulated_busy_s * 1e6,
                               100.0 * error_of(v->simulated_busy_s, v->measured_busy_s));
        g_string_append_printf(t, "%-11s %8s %13.3f us %13.3f us %+8.2f%%  (first start to last end; the device's "
                                  "idle time between ops is not simulated)\n",
                               "span", "", v->measured_span_s * 1e6, v->simulated_makespan_s * 1e6,
                               100.0 * error_of(v->simulated_makespan_s, v->measured_span_s));
        v->table = g_string_free(t, FALSE);
    }
    strata_results_free(r);
    g_array_free(kinds, TRUE);
    strata_source_free(src);
    return ok;
}

void strata_jax_validation_clear(strata_jax_validation *v)
{
    g_free(v->table);
    v->table = NULL;
}
