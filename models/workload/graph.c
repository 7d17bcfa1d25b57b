/*
 * graph.c: tensors, a schedule of computes, and the liveness pass that
 * places allocs and frees (see graph.h).
 *
 * Invariants:
 *  1. steps[] is in program order; a step's ins/outs/donates index tensors[].
 *  2. `option sched=xla` comes first (an XLA program: the copy policies
 *     default to XLA's execution model on any hardware); the arguments are
 *     allocated first, then a `compute program_start
 *     time=0` marks where the program begins (consumers count what is live
 *     before the first compute as arguments), then the steps.
 *  3. last_use[t] is the index of the last step naming t (UINT32_MAX: none),
 *     computed once in wl_graph_to_source() before any op is emitted.
 *  4. total_bytes is the sum of every tensor's bytes; overflow names the
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

static strata_op alloc_op(const wl_tensor_def *d)
{
    strata_op op = {0};
    op.kind = STRATA_OP_ALLOC;
    op.stream = STRATA_DEFAULT_STREAM;
    op.name = d->name;
    op.size = d->bytes;
    op.tag = d->tag;
    op.dtype = d->dtype;
    op.n_dims = d->n_dims;
    memcpy(op.shape, d->dims, sizeof op.shape);
    return op;
}

static const char **names_of(const wl_graph *g, const GArray *ts)
{
    const char **names = g_new0(const char *, ts->len + 1);
    for (guint i = 0; i < ts->len; i++)
        names[i] = def(g, g_array_index(ts, wl_tensor, i))->name;
    return names;
}

static void mark_use(guint32 *last, const GArray *ts, guint32 step)
{
    for (guint i = 0; i < ts->len; i++)
        last[g_array_index(ts, wl_tensor, i)] = step;
}

strata_source *wl_graph_to_source(wl_graph *g, const char *origin, GError **err)
{
    if (g->overflow) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: the size of tensor %s, or of all tensors up to it, overflows 64 bits", origin,
                    g->overflow);
        wl_graph_free(g);
        return NULL;
    }
    guint nt = g->tensors->len;
    guint32 *last = g_new(guint32, nt);
    bool *allocated = g_new0(bool, nt);
    for (guint t = 0; t < nt; t++)
        last[t] = UINT32_MAX;
    for (guint s = 0; s < g->steps->len; s++) {
        const wl_step *st = &g_array_index(g->steps, wl_step, s);
        mark_use(last, st->ins, s);
        mark_use(last, st->outs, s);
    }

    strata_op_list *list = strata_op_list_new();
    /* A JAX program compiled by XLA: its async copies follow XLA's execution
     * model (one program order; see the copy policies' sched=). */
    strata_op sched = {0};
    sched.kind = STRATA_OP_OPTION;
    sched.name = "sched";
    sched.src = "xla";
    strata_op_list_append(list, &sched);
    for (guint t = 0; t < nt; t++) {
        const wl_tensor_def *d = def(g, t);
        if ((d->flags & WL_ARGUMENT) && last[t] != UINT32_MAX) {
            strata_op op = alloc_op(d);
            strata_op_list_append(list, &op);
            allocated[t] = true;
        }
    }
    strata_op begin = {0};
    begin.kind = STRATA_OP_COMPUTE;
    begin.stream = STRATA_DEFAULT_STREAM;
    begin.name = WL_PROGRAM_START;
    begin.has_time = true;
    strata_op_list_append(list, &begin);
    for (guint s = 0; s < g->steps->len; s++) {
        const wl_step *st = &g_array_index(g->steps, wl_step, s);
        for (guint i = 0; i < st->outs->len; i++) {
            wl_tensor t = g_array_index(st->outs, wl_tensor, i);
            if (!allocated[t]) {
                strata_op op = alloc_op(def(g, t));
                strata_op_list_append(list, &op);
                allocated[t] = true;
            }
        }
        for (guint i = 0; i < st->ins->len; i++)
            g_assert(allocated[g_array_index(st->ins, wl_tensor, i)]); /* read before written: a generator bug */
        strata_op op = {0};
        op.kind = STRATA_OP_COMPUTE;
        op.stream = STRATA_DEFAULT_STREAM;
        op.name = st->label;
        op.has_flops = true;
        op.flops = st->flops;
        const char **ins = names_of(g, st->ins), **outs = names_of(g, st->outs),
                   **donates = names_of(g, st->donates);
        op.ins = ins;
        op.n_ins = st->ins->len;
        op.outs = outs;
        op.n_outs = st->outs->len;
        op.donates = donates;
        op.n_donates = st->donates->len;
        strata_op_list_append(list, &op);
        g_free(ins);
        g_free(outs);
        g_free(donates);
        /* Frees after the step, ins then outs, each tensor once. */
        const GArray *lists[2] = {st->ins, st->outs};
        for (int l = 0; l < 2; l++)
            for (guint i = 0; i < lists[l]->len; i++) {
                wl_tensor t = g_array_index(lists[l], wl_tensor, i);
                const wl_tensor_def *d = def(g, t);
                if (last[t] != s || (d->flags & (WL_ARGUMENT | WL_OUTPUT)))
                    continue;
                last[t] = UINT32_MAX - 1; /* freed: never again */
                strata_op fr = {0};
                fr.kind = STRATA_OP_FREE;
                fr.stream = STRATA_DEFAULT_STREAM;
                fr.name = d->name;
                strata_op_list_append(list, &fr);
            }
    }
    g_free(last);
    g_free(allocated);
    wl_graph_free(g);
    return strata_op_list_to_source(list, origin);
}
