/*
 * compare.c: a simulation against a real replay, op by op (see compare.h).
 */
#include "backend/compare.h"

#include <math.h>
#include <stdlib.h>
#include "core/jsonout.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double strata_percentile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static uint64_t span_key(const strata_op_span *s)
{
    /* lines and indices in disjoint halves of the key space */
    return s->line ? s->line : (UINT64_C(1) << 63) | s->op_index;
}

strata_comparison *strata_compare_results(const strata_results *sim, const strata_results *real)
{
    strata_comparison *c = g_new0(strata_comparison, 1);
    c->ops = g_array_new(FALSE, TRUE, sizeof(strata_op_error));
    c->makespan_sim_s = sim->makespan_s;
    c->makespan_real_s = real->makespan_s;
    if (real->makespan_s > 0) {
        c->makespan_error_signed = (sim->makespan_s - real->makespan_s) / real->makespan_s;
        c->makespan_error = fabs(c->makespan_error_signed);
    }
    if (!sim->spans || !real->spans)
        return c;
    GHashTable *by_key = g_hash_table_new(g_int64_hash, g_int64_equal);
    GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(gint64), sim->spans->len);
    for (guint i = 0; i < sim->spans->len; i++) {
        gint64 k = (gint64)span_key(&g_array_index(sim->spans, strata_op_span, i));
        g_array_append_val(keys, k);
    }
    for (guint i = 0; i < sim->spans->len; i++)
        g_hash_table_insert(by_key, &g_array_index(keys, gint64, i), &g_array_index(sim->spans, strata_op_span, i));
    for (guint i = 0; i < real->spans->len; i++) {
        const strata_op_span *r = &g_array_index(real->spans, strata_op_span, i);
        if (r->kind != STRATA_OP_COPY && r->kind != STRATA_OP_COMPUTE)
            continue;
        gint64 k = (gint64)span_key(r);
        const strata_op_span *s = g_hash_table_lookup(by_key, &k);
        if (!s) {
            c->unmatched++;
            continue;
        }
        strata_op_error e = {0};
        e.op_index = r->op_index;
        e.line = r->line;
        e.kind = r->kind;
        e.label = r->label;
        e.stream = r->stream < real->streams->len
                       ? g_array_index(real->streams, strata_stream_result, r->stream).name
                       : "";
        e.sim_s = s->end_s - s->start_s;
        e.real_s = r->end_s - r->start_s;
        if (e.real_s <= 0)
            continue;
        e.error = (e.sim_s - e.real_s) / e.real_s;
        g_array_append_val(c->ops, e);
    }
    g_hash_table_destroy(by_key);
    g_array_free(keys, TRUE);

    size_t n = c->ops->len;
    double *abs_err = g_new(double, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        abs_err[i] = fabs(g_array_index(c->ops, strata_op_error, i).error);
    qsort(abs_err, n, sizeof(double), cmp_double);
    c->p50 = strata_percentile(abs_err, n, 0.50);
    c->p90 = strata_percentile(abs_err, n, 0.90);
    c->p99 = strata_percentile(abs_err, n, 0.99);
    c->max = n ? abs_err[n - 1] : 0;
    g_free(abs_err);
    return c;
}

void strata_comparison_free(strata_comparison *c)
{
    if (!c)
        return;
    g_array_free(c->ops, TRUE);
    g_free(c);
}

void strata_comparison_print(const strata_comparison *c, FILE *out)
{
    fprintf(out, "%8s  %-7s  %-20s  %-10s  %14s  %14s  %9s\n", "line", "kind", "op", "stream", "simulated",
            "measured", "error");
    for (guint i = 0; i < c->ops->len; i++) {
        const strata_op_error *e = &g_array_index(c->ops, strata_op_error, i);
        fprintf(out, "%8" G_GUINT64_FORMAT "  %-7s  %-20s  %-10s  %11.3f us  %11.3f us  %+8.1f%%\n", e->line,
                strata_op_kind_name(e->kind), e->label ? e->label : "", e->stream ? e->stream : "", e->sim_s * 1e6,
                e->real_s * 1e6, e->error * 100);
    }
    fprintf(out, "per-op error (|sim - real| / real) over %u ops: p50 %.1f%%, p90 %.1f%%, p99 %.1f%%, max %.1f%%\n",
            c->ops->len, c->p50 * 100, c->p90 * 100, c->p99 * 100, c->max * 100);
    fprintf(out, "makespan: simulated %.6f s, measured %.6f s, error %+.1f%%\n", c->makespan_sim_s,
            c->makespan_real_s, c->makespan_error_signed * 100);
}

JsonNode *strata_comparison_to_json(const strata_comparison *c)
{
    JsonBuilder *b = strata_json_object_begin();
    const strata_json_field makespan[] = {
        STRATA_JSON_REAL("makespan_sim_s", c->makespan_sim_s),
        STRATA_JSON_REAL("makespan_real_s", c->makespan_real_s),
        STRATA_JSON_REAL("makespan_error", c->makespan_error),
        STRATA_JSON_REAL("makespan_error_signed", c->makespan_error_signed),
    };
    strata_json_add_fields(b, makespan, G_N_ELEMENTS(makespan));
    const strata_json_field per_op[] = {
        STRATA_JSON_INT("count", c->ops->len), STRATA_JSON_REAL("p50", c->p50), STRATA_JSON_REAL("p90", c->p90),
        STRATA_JSON_REAL("p99", c->p99),       STRATA_JSON_REAL("max", c->max),
        STRATA_JSON_INT("unmatched", c->unmatched),
    };
    strata_json_add_object(b, "per_op_error", per_op, G_N_ELEMENTS(per_op));
    strata_json_open_array(b, "ops");
    for (guint i = 0; i < c->ops->len; i++) {
        const strata_op_error *e = &g_array_index(c->ops, strata_op_error, i);
        const strata_json_field durations[] = {STRATA_JSON_REAL("sim_s", e->sim_s),
                                               STRATA_JSON_REAL("real_s", e->real_s),
                                               STRATA_JSON_REAL("error", e->error)};
        strata_results_json_op(b, e->op_index, e->line, e->kind, e->stream, e->label, durations,
                               G_N_ELEMENTS(durations));
    }
    json_builder_end_array(b);
    return strata_json_object_end(b);
}
