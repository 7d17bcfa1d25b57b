/*
 * collective_matmul.c: XLA's windowed einsum on a generated program (see
 * collective_matmul.h for the model and its invariants).
 */
#include "workload/collective_matmul.h"
#include <string.h>

#define WINDOW_STREAM "window"

typedef struct cm_ctx {
    const wl_graph *g;
    wl_graph *o;
    const char *axis;
    uint32_t size;
    uint64_t min_bytes;
    uint32_t pairs;
} cm_ctx;

static bool on_main(const wl_step_view *v) { return g_str_equal(v->stream, STRATA_DEFAULT_STREAM); }

static void set_stream(wl_graph *o, const char *stream)
{
    wl_graph_stream(o, g_str_equal(stream, STRATA_DEFAULT_STREAM) ? NULL : stream);
}

static bool reads(const wl_step_view *v, wl_tensor t)
{
    for (uint32_t i = 0; i < v->n_ins; i++)
        if (v->ins[i] == t)
            return true;
    return false;
}

static bool is_gemm(const wl_step_view *v)
{
    return v->kind == STRATA_OP_COMPUTE && v->kernel && g_str_equal(v->kernel, "gemm") && !v->vary;
}

/* Whether step v is a collective `kind` over the context's axis on a full
 * tensor (the gathered output, the scattered input) of at least min_bytes. */
static bool is_windowed(const cm_ctx *c, const wl_step_view *v, strata_op_kind kind)
{
    if (v->kind != kind || !v->axis || !g_str_equal(v->axis, c->axis) || v->n_ins != 1 || v->n_outs != 1)
        return false;
    wl_tensor full = kind == STRATA_OP_ALL_GATHER ? v->outs[0] : v->ins[0];
    return wl_graph_bytes(c->g, full) >= c->min_bytes;
}

/* The extent a collective over the axis splits, as a gemm sees it: the
 * product of the full tensor's extents up to the first that differs from
 * the shard's (a [B,S,d] gathered along S: B*S, the gemm's rows). */
static uint64_t split_rows(const cm_ctx *c, wl_tensor full, wl_tensor shard)
{
    const uint64_t *f, *s;
    uint32_t nf = wl_graph_dims(c->g, full, &f), ns = wl_graph_dims(c->g, shard, &s);
    uint64_t rows = 1;
    for (uint32_t i = 0; i < nf; i++) {
        rows *= f[i];
        if (i >= ns || f[i] != s[i])
            return rows;
    }
    return 0;
}

/* Step v copied onto its stream, with `ins` in place of its inputs (NULL:
 * its own), `part` of its flops and of its gemm's extent equal to `rows`
 * (else its largest extent that the axis size divides; part 1: as it was). */
static void copy_step(cm_ctx *c, const wl_step_view *v, const wl_tensor *ins, double part, const char *suffix,
                      uint64_t rows)
{
    wl_graph *o = c->o;
    set_stream(o, v->stream);
    if (ins == NULL)
        ins = v->ins;
    switch (v->kind) {
    case STRATA_OP_COMPUTE: {
        char *label = suffix ? g_strconcat(v->label, suffix, NULL) : g_strdup(v->label);
        wl_graph_compute(o, label, v->flops * part, ins, v->n_ins, v->outs, v->n_outs, v->donates, v->n_donates);
        g_free(label);
        if (v->vary)
            wl_graph_vary_step(o);
        if (v->kernel) {
            uint64_t dims[STRATA_MAX_DIMS];
            memcpy(dims, v->kdims, v->n_kdims * sizeof dims[0]);
            if (part != 1) {
                uint32_t big = 0;
                for (uint32_t i = 0; i < v->n_kdims; i++)
                    if (dims[i] % c->size == 0 && (dims[big] % c->size != 0 || dims[i] > dims[big]))
                        big = i;
                for (uint32_t i = v->n_kdims; i-- > 0;)
                    if (dims[i] == rows)
                        big = i; /* the first extent equal to the split rows */
                dims[big] = (uint64_t)((double)dims[big] * part + 0.5);
            }
            wl_graph_kernel(o, v->kernel, v->n_kdims, dims, v->mask);
        }
        break;
    }
    case STRATA_OP_COPY:
        wl_graph_copy(o, v->outs[0], ins[0]);
        break;
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        wl_graph_event(o, v->kind == STRATA_OP_RECORD, v->label);
        break;
    case STRATA_OP_COLLECTIVE_PERMUTE:
        wl_graph_permute(o, v->outs[0], ins[0], v->axis, v->shift);
        break;
    default:
        wl_graph_collective(o, v->kind, v->outs[0], ins[0], v->axis);
        break;
    }
}

/* The collective v on stream `window` from where main is: cmK.go before
 * it, cmK.done after; back on main. Returns K. */
static uint32_t window(cm_ctx *c, const wl_step_view *v)
{
    char ev[40];
    uint32_t k = c->pairs++;
    wl_graph_stream(c->o, NULL);
    g_snprintf(ev, sizeof ev, "cm%u.go", k);
    wl_graph_event(c->o, true, ev);
    wl_graph_stream(c->o, WINDOW_STREAM);
    wl_graph_event(c->o, false, ev);
    wl_graph_collective(c->o, v->kind, v->outs[0], v->ins[0], v->axis);
    g_snprintf(ev, sizeof ev, "cm%u.done", k);
    wl_graph_event(c->o, true, ev);
    wl_graph_stream(c->o, NULL);
    return k;
}

static void wait_done(cm_ctx *c, uint32_t k)
{
    char ev[40];
    g_snprintf(ev, sizeof ev, "cm%u.done", k);
    wl_graph_stream(c->o, NULL);
    wl_graph_event(c->o, false, ev);
}

/* The index of main's first step after i that reads t, or 0 when a step on
 * another stream reads it first or none does. */
static uint32_t first_reader(const cm_ctx *c, uint32_t i, wl_tensor t)
{
    wl_step_view v;
    for (uint32_t j = i + 1; j < wl_graph_n_steps(c->g); j++) {
        wl_graph_step(c->g, j, &v);
        if (reads(&v, t))
            return on_main(&v) ? j : 0;
    }
    return 0;
}

/* The gemm mm reading the gathered tensor of ag, on ag's input's rows
 * while the gather runs ((T-1)/T of its work), main's wait for the gather
 * (cmK.done, or `wait` when ag runs on a side stream already), then the
 * last 1/T on the gathered tensor. */
static void ag_pair(cm_ctx *c, const wl_step_view *ag, const wl_step_view *mm, const char *wait)
{
    double T = (double)c->size;
    wl_tensor *ins = g_new(wl_tensor, mm->n_ins);
    for (uint32_t i = 0; i < mm->n_ins; i++)
        ins[i] = mm->ins[i] == ag->outs[0] ? ag->ins[0] : mm->ins[i];
    uint32_t k = wait ? 0 : window(c, ag);
    uint64_t rows = split_rows(c, ag->outs[0], ag->ins[0]);
    copy_step(c, mm, ins, (T - 1) / T, "_w", rows);
    g_free(ins);
    if (wait) {
        wl_graph_stream(c->o, NULL);
        wl_graph_event(c->o, false, wait);
    } else {
        wait_done(c, k);
    }
    copy_step(c, mm, NULL, 1 / T, "_wlast", rows);
}

/* Step i, when it is a gemm on main writing partial sums p whose first
 * reader is a reduce-scatter over the axis on main (step j): its first
 * 1/T, then the rest while the reduce-scatter runs on `window`, then the
 * steps between i and j (none reads p), then main's wait for cmK.done
 * where the reduce-scatter was. done marks the steps emitted. */
static bool try_rs(cm_ctx *c, uint32_t i, GArray *done)
{
    double T = (double)c->size;
    wl_step_view v, w, b;
    wl_graph_step(c->g, i, &v);
    if (!on_main(&v) || !is_gemm(&v) || v.n_outs != 1)
        return false;
    uint32_t j = first_reader(c, i, v.outs[0]);
    if (!j)
        return false;
    wl_graph_step(c->g, j, &w);
    if (!is_windowed(c, &w, STRATA_OP_REDUCE_SCATTER) || w.ins[0] != v.outs[0])
        return false;
    uint64_t rows = split_rows(c, w.ins[0], w.outs[0]);
    copy_step(c, &v, NULL, 1 / T, "_wfirst", rows);
    uint32_t k = window(c, &w);
    copy_step(c, &v, NULL, (T - 1) / T, "_w", rows);
    for (uint32_t s = i + 1; s < j; s++) {
        wl_graph_step(c->g, s, &b);
        copy_step(c, &b, NULL, 1, NULL, 0);
    }
    wait_done(c, k);
    for (uint32_t s = i; s <= j; s++)
        g_array_index(done, guint8, s) = 1;
    return true;
}

/* Step i, when it is an all-gather over the axis and main's first step
 * reading its output is a gemm: the pair rewritten (ag_pair). On main the
 * gemm must follow it; on a side stream (the backward pass' regathers)
 * its RECORD must follow it, main's WAIT for that event come right before
 * the gemm (it moves between the gemm's parts), and no step between be one
 * this rewrites. done marks the steps emitted. */
static bool try_ag(cm_ctx *c, uint32_t i, GArray *done)
{
    wl_step_view v, w, b;
    wl_graph_step(c->g, i, &v);
    if (!is_windowed(c, &v, STRATA_OP_ALL_GATHER))
        return false;
    uint32_t j = first_reader(c, i, v.outs[0]), wait_at = 0;
    const char *ev = NULL;
    if (!j)
        return false;
    wl_graph_step(c->g, j, &w);
    if (!is_gemm(&w))
        return false;
    if (on_main(&v) && j != i + 1)
        return false;
    if (!on_main(&v)) {
        wl_graph_step(c->g, i + 1, &b);
        if (i + 1 >= j || b.kind != STRATA_OP_RECORD || !g_str_equal(b.stream, v.stream))
            return false;
        ev = b.label;
        for (uint32_t s = i + 2; s < j && !wait_at; s++) {
            wl_graph_step(c->g, s, &b);
            if (b.kind == STRATA_OP_WAIT && on_main(&b) && g_str_equal(b.label, ev))
                wait_at = s;
        }
        if (wait_at + 1 != j)
            return false;
        for (uint32_t s = i + 2; s < wait_at; s++) { /* nothing else to rewrite in between */
            wl_graph_step(c->g, s, &b);
            if (is_gemm(&b) || is_windowed(c, &b, STRATA_OP_ALL_GATHER) || is_windowed(c, &b, STRATA_OP_REDUCE_SCATTER))
                return false;
        }
        for (uint32_t s = i; s < j; s++) {
            if (s == wait_at)
                continue;
            wl_graph_step(c->g, s, &b);
            copy_step(c, &b, NULL, 1, NULL, 0);
        }
        c->pairs++;
    }
    for (uint32_t s = i; s <= j; s++)
        g_array_index(done, guint8, s) = 1;
    wl_graph_step(c->g, i, &v);
    wl_graph_step(c->g, j, &w);
    ag_pair(c, &v, &w, ev);
    return true;
}

static void copy_tensors(const wl_graph *g, wl_graph *o)
{
    uint32_t vn = 0;
    uint64_t vmax = 0;
    const uint64_t *rows = wl_graph_vary_rows(g, &vn, &vmax);
    if (rows)
        wl_graph_vary(o, vn, rows);
    for (uint32_t i = 0; i < wl_graph_n_options(g); i++) {
        const char *k, *v;
        wl_graph_option_at(g, i, &k, &v);
        wl_graph_option(o, k, v);
    }
    for (wl_tensor t = 0; t < wl_graph_n_tensors(g); t++) {
        const uint64_t *dims;
        uint32_t nd = wl_graph_dims(g, t, &dims);
        uint64_t copy[STRATA_MAX_DIMS + 1];
        memcpy(copy, dims, nd * sizeof copy[0]);
        wl_graph_tensor(o, wl_graph_name(g, t), wl_graph_tag(g, t), wl_graph_dtype(g, t), nd, copy,
                        wl_graph_flags(g, t));
        const char *mem = wl_graph_memory_of(g, t);
        if (mem)
            wl_graph_memory(o, t, mem);
    }
}

wl_graph *wl_collective_matmul(const wl_graph *g, const char *axis, uint32_t size, uint64_t min_bytes,
                               uint32_t *pairs)
{
    g_assert(size >= 2);
    cm_ctx c = {g, wl_graph_new(), axis, size, min_bytes, 0};
    copy_tensors(g, c.o);
    uint32_t n = wl_graph_n_steps(g);
    GArray *done = g_array_new(FALSE, TRUE, sizeof(guint8)); /* steps already emitted as a pair's second */
    g_array_set_size(done, n);
    for (uint32_t i = 0; i < n; i++) {
        if (g_array_index(done, guint8, i))
            continue;
        if (try_ag(&c, i, done) || try_rs(&c, i, done))
            continue;
        wl_step_view v;
        wl_graph_step(g, i, &v);
        copy_step(&c, &v, NULL, 1, NULL, 0);
    }
    g_array_free(done, TRUE);
    if (pairs)
        *pairs = c.pairs;
    return c.o;
}
