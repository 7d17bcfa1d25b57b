/*
 * graph_source.c: the op stream of a wl_graph, produced lazily step by step
 * (see graph.h for the placement rules), so that a generated program of
 * millions of ops never exists as a list of ops.
 *
 * The stream is, in order: `option sched=xla` and the graph's options; the
 * allocs of the arguments some step uses, in declaration order; `compute
 * program_start time=0`; then for each step the allocs of its outputs not
 * yet allocated, the step's op (a compute, record, wait or collective), and
 * the frees of the tensors whose last use it is (ins then outs, each once;
 * arguments and outputs never freed), the allocs and frees on the step's
 * stream.
 *
 * Invariants:
 *  1. last[t] is the index of the last step naming t in its ins or outs
 *     (UINT32_MAX: none), computed once before the first op.
 *  2. state[t] is T_NEW until t is allocated, T_LIVE until freed, then
 *     T_FREED; rewind() resets every state to T_NEW and the cursor to the
 *     start, so a second pass yields the same ops.
 *  3. pending[] holds the ops of the current step (pointing into the graph
 *     and into ins/outs/donates); they stay valid until the next step is
 *     expanded, which only happens once all of them were handed out.
 */
#include "workload/graph.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "workload/workload.h"

enum { T_NEW, T_LIVE, T_FREED };
enum { PH_SCHED, PH_OPTIONS, PH_ARGS, PH_BEGIN, PH_STEPS, PH_END };

typedef struct graph_stream {
    wl_graph *g;
    guint32 *last;
    guint8 *state;
    uint32_t n_tensors, n_steps;
    int phase;
    uint32_t cursor;     /* PH_OPTIONS: next option; PH_ARGS: next tensor; PH_STEPS: next step */
    GArray *pending;     /* strata_op of the current step */
    guint pending_next;
    GPtrArray *names[3]; /* ins, outs, donates of the current compute */
    GPtrArray *dev_lists; /* per-device name lists of the current step (g_free'd at the next) */
    GStringChunk *dev_names; /* NAME@D of the WL_VARY tensors */
    strata_op op;        /* the op handed out outside PH_STEPS */
} graph_stream;

static void stream_reset(graph_stream *s)
{
    memset(s->state, T_NEW, s->n_tensors);
    s->phase = PH_SCHED;
    s->cursor = 0;
    g_array_set_size(s->pending, 0);
    s->pending_next = 0;
}

static strata_op alloc_op(const wl_graph *g, wl_tensor t, const char *stream)
{
    strata_op op = strata_op_make_alloc(stream, wl_graph_name(g, t), wl_graph_bytes(g, t), wl_graph_memory_of(g, t),
                                        wl_graph_tag(g, t));
    const uint64_t *dims;
    uint32_t n_dims = wl_graph_dims(g, t, &dims);
    strata_op_set_shape(&op, wl_graph_dtype(g, t), n_dims, dims);
    return op;
}

static const char *const *names_of(graph_stream *s, int which, const wl_tensor *ts, uint32_t n)
{
    GPtrArray *a = s->names[which];
    g_ptr_array_set_size(a, 0);
    for (uint32_t i = 0; i < n; i++)
        g_ptr_array_add(a, (gpointer)wl_graph_name(s->g, ts[i]));
    g_ptr_array_add(a, NULL); /* never a NULL array, even when n is 0 */
    return (const char *const *)a->pdata;
}

/* Tensor t's name on device d: NAME@D for a WL_VARY tensor (each device
 * holds its own size, so each its own name: the check tracks names), else
 * NAME. */
static const char *dev_name(graph_stream *s, wl_tensor t, uint32_t d)
{
    if (!(wl_graph_flags(s->g, t) & WL_VARY))
        return wl_graph_name(s->g, t);
    char buf[256];
    g_snprintf(buf, sizeof buf, "%s@%u", wl_graph_name(s->g, t), d);
    return g_string_chunk_insert_const(s->dev_names, buf);
}

/* The names of ts on device d, in a list that lives until the next step. */
static const char *const *dev_names_of(graph_stream *s, const wl_tensor *ts, uint32_t n, uint32_t d)
{
    const char **list = g_new(const char *, n + 1);
    for (uint32_t i = 0; i < n; i++)
        list[i] = dev_name(s, ts[i], d);
    list[n] = NULL;
    g_ptr_array_add(s->dev_lists, list);
    return list;
}

/* The allocs of t: one, or with WL_VARY one per device (device=D), its
 * first extent that device's rows (at least 1). */
static void expand_allocs(graph_stream *s, wl_tensor t, const char *stream)
{
    uint32_t n = 0;
    uint64_t max = 0;
    const uint64_t *rows = wl_graph_vary_rows(s->g, &n, &max);
    if (!(wl_graph_flags(s->g, t) & WL_VARY) || !rows) {
        strata_op op = alloc_op(s->g, t, stream);
        g_array_append_val(s->pending, op);
        return;
    }
    const uint64_t *dims;
    uint32_t nd = wl_graph_dims(s->g, t, &dims);
    g_assert(nd >= 1 && dims[0] == max);
    uint64_t row_elems = wl_graph_elements(s->g, t) / max;
    for (uint32_t d = 0; d < n; d++) {
        uint64_t r = MAX(rows[d], 1), bytes = 0, ext[STRATA_MAX_DIMS];
        memcpy(ext, dims, nd * sizeof ext[0]);
        ext[0] = r;
        (void)strata_workload_bytes(r * row_elems, strata_dtype_bits(wl_graph_dtype(s->g, t)), &bytes);
        strata_op op = strata_op_make_alloc(stream, dev_name(s, t, d), bytes, wl_graph_memory_of(s->g, t),
                                            wl_graph_tag(s->g, t));
        strata_op_set_shape(&op, wl_graph_dtype(s->g, t), nd, ext);
        op.has_device = true;
        op.device = d;
        g_array_append_val(s->pending, op);
    }
}

/* The frees after step `step`: ins then outs, each tensor once. */
static void expand_frees(graph_stream *s, uint32_t step, const wl_step_view *v)
{
    const wl_tensor *lists[2] = {v->ins, v->outs};
    uint32_t lens[2] = {v->n_ins, v->n_outs};
    for (int l = 0; l < 2; l++)
        for (uint32_t i = 0; i < lens[l]; i++) {
            wl_tensor t = lists[l][i];
            assert(s->last[t] != UINT32_MAX && s->last[t] >= step); /* invariant 1 */
            if (s->last[t] != step || s->state[t] != T_LIVE || (wl_graph_flags(s->g, t) & (WL_ARGUMENT | WL_OUTPUT)))
                continue;
            s->state[t] = T_FREED;
            uint32_t n = 0;
            uint64_t max = 0;
            bool vary = (wl_graph_flags(s->g, t) & WL_VARY) && wl_graph_vary_rows(s->g, &n, &max);
            for (uint32_t d = 0; d < (vary ? n : 1); d++) {
                strata_op fr = strata_op_make(STRATA_OP_FREE, v->stream, dev_name(s, t, d));
                fr.has_device = vary;
                fr.device = d;
                g_array_append_val(s->pending, fr);
            }
        }
}

/* The compute op of step v. */
static void expand_compute(graph_stream *s, const wl_step_view *v, strata_op *op)
{
    *op = strata_op_make_compute(v->stream, v->label, v->flops, names_of(s, 0, v->ins, v->n_ins), v->n_ins,
                                 names_of(s, 1, v->outs, v->n_outs), v->n_outs, NULL);
    op->has_flops = true; /* flops=0 too: a step's figure, written as the graph has it */
    op->flops = v->flops;
    op->donates = names_of(s, 2, v->donates, v->n_donates);
    op->n_donates = v->n_donates;
    if (v->kernel) {
        op->kernel = v->kernel;
        op->n_kdims = v->n_kdims;
        memcpy(op->dims, v->kdims, v->n_kdims * sizeof op->dims[0]);
        op->mask = v->mask;
    }
}

/* pending = the ops of step `step`. */
static void expand_step(graph_stream *s, uint32_t step)
{
    wl_step_view v;
    wl_graph_step(s->g, step, &v);
    assert(s->pending_next >= s->pending->len); /* invariant 3: every pending op was handed out */
    g_array_set_size(s->pending, 0);
    s->pending_next = 0;
    g_ptr_array_set_size(s->dev_lists, 0);
    for (uint32_t i = 0; i < v.n_outs; i++)
        if (s->state[v.outs[i]] == T_NEW) {
            expand_allocs(s, v.outs[i], v.stream);
            s->state[v.outs[i]] = T_LIVE;
        }
    for (uint32_t i = 0; i < v.n_ins; i++)
        g_assert(s->state[v.ins[i]] == T_LIVE); /* read before written: a generator bug */
    strata_op op;
    if (strata_op_kind_is_collective(v.kind))
        op = strata_op_make_collective(v.kind, v.stream, wl_graph_name(s->g, v.outs[0]),
                                       wl_graph_name(s->g, v.ins[0]), v.axis, NULL, v.shift);
    else if (v.kind == STRATA_OP_COPY)
        op = strata_op_make_copy(v.stream, wl_graph_name(s->g, v.outs[0]), wl_graph_name(s->g, v.ins[0]), 0);
    else if (v.kind != STRATA_OP_COMPUTE)
        op = strata_op_make(v.kind, v.stream, v.label);
    else
        expand_compute(s, &v, &op);
    bool copy_vary = v.kind == STRATA_OP_COPY && (wl_graph_flags(s->g, v.outs[0]) & WL_VARY);
    if (v.vary || copy_vary) { /* one per device, its work scaled by its rows; a copy of its own buffers */
        uint32_t n = 0;
        uint64_t max = 0;
        const uint64_t *rows = wl_graph_vary_rows(s->g, &n, &max);
        for (uint32_t d = 0; d < n; d++) {
            strata_op one = op;
            if (copy_vary) {
                one.name = dev_name(s, v.outs[0], d);
                one.src = dev_name(s, v.ins[0], d);
            } else {
                one.flops = max ? op.flops * (double)rows[d] / (double)max : 0;
                one.ins = dev_names_of(s, v.ins, v.n_ins, d);
                one.outs = dev_names_of(s, v.outs, v.n_outs, d);
            }
            one.has_device = true;
            one.device = d;
            g_array_append_val(s->pending, one);
        }
    } else
        g_array_append_val(s->pending, op);
    expand_frees(s, step, &v);
}

/* The next used argument from s->cursor on, or WL_NONE. */
static wl_tensor next_argument(graph_stream *s)
{
    while (s->cursor < s->n_tensors) {
        wl_tensor t = s->cursor++;
        if ((wl_graph_flags(s->g, t) & WL_ARGUMENT) && s->last[t] != UINT32_MAX)
            return t;
    }
    return WL_NONE;
}

static int stream_next(void *self, const strata_op **out, GError **err)
{
    (void)err;
    graph_stream *s = self;
    memset(&s->op, 0, sizeof s->op);
    switch (s->phase) {
    case PH_SCHED:
        /* A JAX program compiled by XLA: its async copies follow XLA's
         * execution model (one program order; see the copy policies' sched=). */
        s->op = strata_op_make_option("sched", "xla");
        s->phase = PH_OPTIONS;
        *out = &s->op;
        return 1;
    case PH_OPTIONS:
        if (s->cursor < wl_graph_n_options(s->g)) {
            const char *key, *value;
            wl_graph_option_at(s->g, s->cursor++, &key, &value);
            s->op = strata_op_make_option(key, value);
            *out = &s->op;
            return 1;
        }
        s->phase = PH_ARGS;
        s->cursor = 0;
        /* fall through */
    case PH_ARGS: {
        wl_tensor t = next_argument(s);
        if (t != WL_NONE) {
            s->op = alloc_op(s->g, t, NULL);
            assert(s->state[t] == T_NEW); /* invariant 2 */
            s->state[t] = T_LIVE;
            *out = &s->op;
            return 1;
        }
        s->phase = PH_BEGIN;
    }
        /* fall through */
    case PH_BEGIN:
        s->op = strata_op_make_timed(NULL, WL_PROGRAM_START, 0);
        s->phase = PH_STEPS;
        s->cursor = 0;
        *out = &s->op;
        return 1;
    case PH_STEPS:
        while (s->pending_next >= s->pending->len) {
            if (s->cursor >= s->n_steps) {
                s->phase = PH_END;
                return 0;
            }
            expand_step(s, s->cursor++);
        }
        *out = &g_array_index(s->pending, strata_op, s->pending_next++);
        return 1;
    default:
        return 0;
    }
}

static bool stream_rewind(void *self, GError **err)
{
    (void)err;
    stream_reset(self);
    return true;
}

static void stream_destroy(void *self)
{
    graph_stream *s = self;
    wl_graph_free(s->g);
    g_free(s->last);
    g_free(s->state);
    g_array_free(s->pending, TRUE);
    for (int i = 0; i < 3; i++)
        g_ptr_array_free(s->names[i], TRUE);
    g_ptr_array_free(s->dev_lists, TRUE);
    g_string_chunk_free(s->dev_names);
    g_free(s);
}

static const strata_source_vtable graph_stream_vtable = {
    .next = stream_next,
    .rewind = stream_rewind,
    .destroy = stream_destroy,
};

strata_source *wl_graph_to_source(wl_graph *g, const char *origin, GError **err)
{
    const char *overflow = wl_graph_overflow(g);
    if (overflow) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: the size of tensor %s, or of all tensors up to it, overflows 64 bits", origin, overflow);
        wl_graph_free(g);
        return NULL;
    }
    graph_stream *s = g_new0(graph_stream, 1);
    s->g = g;
    s->n_tensors = wl_graph_n_tensors(g);
    s->n_steps = wl_graph_n_steps(g);
    s->last = g_new(guint32, s->n_tensors ? s->n_tensors : 1);
    s->state = g_new(guint8, s->n_tensors ? s->n_tensors : 1);
    for (uint32_t t = 0; t < s->n_tensors; t++)
        s->last[t] = UINT32_MAX;
    for (uint32_t step = 0; step < s->n_steps; step++) {
        wl_step_view v;
        wl_graph_step(g, step, &v);
        for (uint32_t i = 0; i < v.n_ins; i++)
            s->last[v.ins[i]] = step;
        for (uint32_t i = 0; i < v.n_outs; i++)
            s->last[v.outs[i]] = step;
    }
    s->pending = g_array_new(FALSE, TRUE, sizeof(strata_op));
    for (int i = 0; i < 3; i++)
        s->names[i] = g_ptr_array_new();
    s->dev_lists = g_ptr_array_new_with_free_func(g_free);
    s->dev_names = g_string_chunk_new(4096);
    stream_reset(s);
    return strata_source_new(&graph_stream_vtable, s, origin);
}
