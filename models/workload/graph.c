/*
 * graph.c: tensors and a schedule of computes (see graph.h); the liveness
 * pass that places allocs and frees is the stream's (graph_source.c).
 *
 * Invariants:
 *  1. steps[] is in program order; a step's ins/outs/donates index tensors[].
 *  2. total_bytes is the sum of every tensor's bytes; overflow names the
 *     first tensor whose size, or the running total, does not fit in 64
 *     bits (NULL: none), and wl_graph_to_source() then fails.
 */
#include "workload/graph.h"
#include <string.h>
#include "core/error.h"
#include "workload/workload.h"

typedef struct wl_tensor_def {
    char *name;
    strata_tag tag;
    strata_dtype dtype;
    uint32_t n_dims;
    uint64_t dims[STRATA_MAX_DIMS];
    uint64_t bytes;
    unsigned flags;
} wl_tensor_def;

typedef struct wl_step {
    char *label;
    double flops;
    GArray *ins, *outs, *donates; /* wl_tensor */
} wl_step;

struct wl_graph {
    GArray *tensors; /* wl_tensor_def */
    GArray *steps;   /* wl_step */
    uint64_t total_bytes;
    char *overflow;
};

static void tensor_clear(gpointer data) { g_free(((wl_tensor_def *)data)->name); }

static void step_clear(gpointer data)
{
    wl_step *s = data;
    g_free(s->label);
    g_array_free(s->ins, TRUE);
    g_array_free(s->outs, TRUE);
    g_array_free(s->donates, TRUE);
}

wl_graph *wl_graph_new(void)
{
    wl_graph *g = g_new0(wl_graph, 1);
    g->tensors = g_array_new(FALSE, TRUE, sizeof(wl_tensor_def));
    g_array_set_clear_func(g->tensors, tensor_clear);
    g->steps = g_array_new(FALSE, TRUE, sizeof(wl_step));
    g_array_set_clear_func(g->steps, step_clear);
    return g;
}

void wl_graph_free(wl_graph *g)
{
    if (!g)
        return;
    g_array_free(g->tensors, TRUE);
    g_array_free(g->steps, TRUE);
    g_free(g->overflow);
    g_free(g);
}

static wl_tensor_def *def(const wl_graph *g, wl_tensor t)
{
    g_assert(t < g->tensors->len);
    return &g_array_index(g->tensors, wl_tensor_def, t);
}

wl_tensor wl_graph_tensor(wl_graph *g, const char *name, strata_tag tag, strata_dtype dtype,
                          uint32_t n_dims, const uint64_t *dims, unsigned flags)
{
    g_assert(n_dims <= STRATA_MAX_DIMS);
    wl_tensor_def d = {0};
    d.name = g_strdup(name);
    d.tag = tag;
    d.dtype = dtype;
    d.n_dims = n_dims;
    d.flags = flags;
    uint64_t elements = 1;
    bool overflow = false;
    for (uint32_t i = 0; i < n_dims; i++) {
        d.dims[i] = dims[i];
        overflow |= __builtin_mul_overflow(elements, dims[i], &elements);
    }
    overflow |= !strata_workload_bytes(elements, strata_dtype_bits(dtype), &d.bytes);
    if (d.bytes == 0)
        d.bytes = 1;
    overflow |= __builtin_add_overflow(g->total_bytes, d.bytes, &g->total_bytes);
    if (overflow && !g->overflow)
        g->overflow = g_strdup(name);
    g_array_append_val(g->tensors, d);
    return g->tensors->len - 1;
}

const char *wl_graph_name(const wl_graph *g, wl_tensor t) { return def(g, t)->name; }
strata_dtype wl_graph_dtype(const wl_graph *g, wl_tensor t) { return def(g, t)->dtype; }
strata_tag wl_graph_tag(const wl_graph *g, wl_tensor t) { return def(g, t)->tag; }

uint32_t wl_graph_dims(const wl_graph *g, wl_tensor t, const uint64_t **dims)
{
    const wl_tensor_def *d = def(g, t);
    *dims = d->dims;
    return d->n_dims;
}

uint64_t wl_graph_elements(const wl_graph *g, wl_tensor t)
{
    const wl_tensor_def *d = def(g, t);
    uint64_t e = 1;
    for (uint32_t i = 0; i < d->n_dims; i++)
        e *= d->dims[i];
    return e;
}

static GArray *tensor_array(const wl_tensor *ts, uint32_t n)
{
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(wl_tensor), n);
    if (n)
        g_array_append_vals(a, ts, n);
    return a;
}

void wl_graph_compute(wl_graph *g, const char *label, double flops, const wl_tensor *ins, uint32_t n_ins,
                      const wl_tensor *outs, uint32_t n_outs, const wl_tensor *donates, uint32_t n_donates)
{
    wl_step s = {g_strdup(label), flops, tensor_array(ins, n_ins), tensor_array(outs, n_outs),
                 tensor_array(donates, n_donates)};
    g_array_append_val(g->steps, s);
}

uint32_t wl_graph_n_tensors(const wl_graph *g) { return g->tensors->len; }
uint64_t wl_graph_bytes(const wl_graph *g, wl_tensor t) { return def(g, t)->bytes; }
unsigned wl_graph_flags(const wl_graph *g, wl_tensor t) { return def(g, t)->flags; }
uint32_t wl_graph_n_steps(const wl_graph *g) { return g->steps->len; }
const char *wl_graph_overflow(const wl_graph *g) { return g->overflow; }

void wl_graph_step(const wl_graph *g, uint32_t step, wl_step_view *v)
{
    g_assert(step < g->steps->len);
    const wl_step *st = &g_array_index(g->steps, wl_step, step);
    *v = (wl_step_view){st->label, st->flops, (const wl_tensor *)st->ins->data, (const wl_tensor *)st->outs->data,
                        (const wl_tensor *)st->donates->data, st->ins->len, st->outs->len, st->donates->len};
}
