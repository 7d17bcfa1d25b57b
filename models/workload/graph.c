/*
 * graph.c: tensors and a schedule of computes (see graph.h); the liveness
 * pass that places allocs and frees is the stream's (graph_source.c).
 *
 * Storage is flat so that a program of a million tensors stays small: names
 * and labels in one string chunk, each distinct shape once in shapes[], and
 * every step's ins, outs and donates back to back in ids[].
 *
 * Invariants:
 *  1. steps[] is in program order; step s's ins, outs and donates are
 *     ids[first .. first + n_ins + n_outs + n_donates), in that order, and
 *     index tensors[].
 *  2. a tensor's extents are shapes[shape .. shape + n_dims); shape_ids maps
 *     each distinct extents list to its offset.
 *  3. a step's kind is COMPUTE, RECORD, WAIT or a collective; its stream
 *     and axis are NULL (main; none) or in strings; a collective has one in
 *     and one out (the same tensor for all-reduce).
 *  4. options holds key, value pairs (in strings).
 *  5. total_bytes is the sum of every tensor's bytes; overflow names the
 *     first tensor whose size, or the running total, does not fit in 64
 *     bits (NULL: none), and wl_graph_to_source() then fails.
 */
#include "workload/graph.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "workload/workload.h"

typedef struct wl_tensor_def {
    const char *name; /* in strings */
    uint32_t shape;   /* offset in shapes */
    guint8 n_dims, tag, dtype, flags;
} wl_tensor_def;

typedef struct wl_step {
    const char *label; /* in strings */
    double flops;
    uint32_t first;    /* offset in ids */
    guint16 n_ins, n_outs, n_donates;
    guint16 stream, axis; /* indices in names (0: NULL) */
    guint8 kind;
    gint8 aux;         /* collective-permute: its shift; a compute: 1 when it varies per device */
} wl_step; /* 32 bytes: a program holds one per step, often a million */

/* A step's kernel= dims= mask= (wl_graph_kernel). */
typedef struct wl_kernel_def {
    const char *kernel, *mask; /* in strings; mask NULL: none */
    uint32_t shape;            /* offset in shapes */
    uint32_t n_dims;
} wl_kernel_def;

struct wl_graph {
    GArray *tensors;       /* wl_tensor_def */
    GArray *steps;         /* wl_step */
    GArray *ids;           /* wl_tensor */
    GArray *shapes;        /* uint64_t */
    GHashTable *shape_ids; /* GBytes of extents -> offset + 1 */
    GStringChunk *strings;
    GPtrArray *options;    /* key, value, ... (in strings) */
    GPtrArray *names;      /* the streams and axes steps name (in strings); [0] NULL */
    GHashTable *name_ids;  /* a string of names (its pointer) -> its index */
    GHashTable *kernels;   /* step index -> wl_kernel_def * (the few steps that name a kernel) */
    GHashTable *memories;  /* tensor -> its memory's name (in strings), for the few not on the device */
    guint16 stream;        /* of the steps added now; 0: main */
    uint64_t total_bytes;
    char *overflow;
    uint64_t *vary_rows;   /* wl_graph_vary: rows per device (NULL: none) */
    uint32_t vary_n;
    uint64_t vary_max;
};

wl_graph *wl_graph_new(void)
{
    wl_graph *g = g_new0(wl_graph, 1);
    g->tensors = g_array_new(FALSE, FALSE, sizeof(wl_tensor_def));
    g->steps = g_array_new(FALSE, FALSE, sizeof(wl_step));
    g->ids = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    g->shapes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    g->shape_ids = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    g->strings = g_string_chunk_new(1 << 16);
    g->options = g_ptr_array_new();
    g->names = g_ptr_array_new();
    g_ptr_array_add(g->names, NULL);
    g->name_ids = g_hash_table_new(g_direct_hash, g_direct_equal);
    g->kernels = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g->memories = g_hash_table_new(g_direct_hash, g_direct_equal);
    return g;
}

void wl_graph_free(wl_graph *g)
{
    if (!g)
        return;
    g_array_free(g->tensors, TRUE);
    g_array_free(g->steps, TRUE);
    g_array_free(g->ids, TRUE);
    g_array_free(g->shapes, TRUE);
    g_hash_table_destroy(g->shape_ids);
    g_string_chunk_free(g->strings);
    g_ptr_array_free(g->options, TRUE);
    g_ptr_array_free(g->names, TRUE);
    g_hash_table_destroy(g->name_ids);
    g_hash_table_destroy(g->kernels);
    g_hash_table_destroy(g->memories);
    g_free(g->overflow);
    g_free(g->vary_rows);
    g_free(g);
}

static const wl_tensor_def *def(const wl_graph *g, wl_tensor t)
{
    g_assert(t < g->tensors->len);
    return &g_array_index(g->tensors, wl_tensor_def, t);
}

/* The offset of extents dims[0..n) in shapes, added when new. */
static uint32_t intern_shape(wl_graph *g, uint32_t n, const uint64_t *dims)
{
    GBytes *key = g_bytes_new(dims, n * sizeof dims[0]);
    gpointer found = g_hash_table_lookup(g->shape_ids, key);
    if (found) {
        g_bytes_unref(key);
        return GPOINTER_TO_UINT(found) - 1;
    }
    uint32_t at = g->shapes->len;
    /* From the key's copy: dims may point into shapes, which this moves. */
    g_array_append_vals(g->shapes, g_bytes_get_data(key, NULL), n);
    g_hash_table_insert(g->shape_ids, key, GUINT_TO_POINTER(at + 1));
    return at;
}

wl_tensor wl_graph_tensor(wl_graph *g, const char *name, strata_tag tag, strata_dtype dtype,
                          uint32_t n_dims, const uint64_t *dims, unsigned flags)
{
    g_assert(n_dims <= STRATA_MAX_DIMS && tag <= G_MAXUINT8 && dtype <= G_MAXUINT8 && flags <= G_MAXUINT8);
    wl_tensor_def d = {0};
    d.name = g_string_chunk_insert(g->strings, name);
    d.tag = (guint8)tag;
    d.dtype = (guint8)dtype;
    d.n_dims = (guint8)n_dims;
    d.flags = (guint8)flags;
    uint64_t elements = 1;
    bool overflow = false;
    for (uint32_t i = 0; i < n_dims; i++)
        overflow |= __builtin_mul_overflow(elements, dims[i], &elements);
    d.shape = intern_shape(g, n_dims, dims);
    uint64_t bytes = 0;
    overflow |= !strata_workload_bytes(elements, strata_dtype_bits(dtype), &bytes);
    overflow |= __builtin_add_overflow(g->total_bytes, bytes ? bytes : 1, &g->total_bytes);
    if (overflow && !g->overflow)
        g->overflow = g_strdup(name);
    g_array_append_val(g->tensors, d);
    return g->tensors->len - 1;
}

const char *wl_graph_name(const wl_graph *g, wl_tensor t) { return def(g, t)->name; }
strata_dtype wl_graph_dtype(const wl_graph *g, wl_tensor t) { return (strata_dtype)def(g, t)->dtype; }
strata_tag wl_graph_tag(const wl_graph *g, wl_tensor t) { return (strata_tag)def(g, t)->tag; }

uint32_t wl_graph_dims(const wl_graph *g, wl_tensor t, const uint64_t **dims)
{
    const wl_tensor_def *d = def(g, t);
    static const uint64_t scalar[1] = {0}; /* never NULL, even for a scalar */
    *dims = d->n_dims ? &g_array_index(g->shapes, uint64_t, d->shape) : scalar;
    return d->n_dims;
}

uint64_t wl_graph_elements(const wl_graph *g, wl_tensor t)
{
    const uint64_t *dims;
    uint32_t n = wl_graph_dims(g, t, &dims);
    uint64_t e = 1;
    for (uint32_t i = 0; i < n; i++)
        e *= dims[i];
    return e;
}

/* The index of name (NULL: 0) in names, added when new. */
static guint16 name_id(wl_graph *g, const char *name)
{
    if (!name)
        return 0;
    const char *s = g_string_chunk_insert_const(g->strings, name);
    gpointer found = g_hash_table_lookup(g->name_ids, s);
    if (found)
        return (guint16)GPOINTER_TO_UINT(found);
    g_assert(g->names->len < G_MAXUINT16);
    g_ptr_array_add(g->names, (gpointer)s);
    g_hash_table_insert(g->name_ids, (gpointer)s, GUINT_TO_POINTER(g->names->len - 1));
    return (guint16)(g->names->len - 1);
}

#ifndef NDEBUG
/* Invariant 1 for one list of a step: every id indexes tensors[]. */
static bool ids_ok(const wl_graph *g, const wl_tensor *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] >= g->tensors->len)
            return false;
    return true;
}
#endif

/* Appends a step on the current stream; returns it for the caller to complete. */
static wl_step *add_step(wl_graph *g, strata_op_kind kind, const char *label, const wl_tensor *ins, uint32_t n_ins,
                         const wl_tensor *outs, uint32_t n_outs, const wl_tensor *donates, uint32_t n_donates)
{
    g_assert(n_ins <= G_MAXUINT16 && n_outs <= G_MAXUINT16 && n_donates <= G_MAXUINT16);
    assert(ids_ok(g, ins, n_ins) && ids_ok(g, outs, n_outs) && ids_ok(g, donates, n_donates)); /* invariant 1 */
    assert(kind == STRATA_OP_COMPUTE || kind == STRATA_OP_COPY || kind == STRATA_OP_RECORD || kind == STRATA_OP_WAIT ||
           strata_op_kind_is_collective(kind)); /* invariant 3 */
    wl_step s = {g_string_chunk_insert(g->strings, label), 0, g->ids->len, (guint16)n_ins, (guint16)n_outs,
                 (guint16)n_donates, g->stream, 0, (guint8)kind, 0};
    g_array_append_vals(g->ids, ins, n_ins);
    g_array_append_vals(g->ids, outs, n_outs);
    g_array_append_vals(g->ids, donates, n_donates);
    g_array_append_val(g->steps, s);
    return &g_array_index(g->steps, wl_step, g->steps->len - 1);
}

void wl_graph_compute(wl_graph *g, const char *label, double flops, const wl_tensor *ins, uint32_t n_ins,
                      const wl_tensor *outs, uint32_t n_outs, const wl_tensor *donates, uint32_t n_donates)
{
    add_step(g, STRATA_OP_COMPUTE, label, ins, n_ins, outs, n_outs, donates, n_donates)->flops = flops;
}

void wl_graph_memory(wl_graph *g, wl_tensor t, const char *memory)
{
    g_assert(t < g->tensors->len);
    g_hash_table_replace(g->memories, GUINT_TO_POINTER(t), (gpointer)g_string_chunk_insert_const(g->strings, memory));
}

const char *wl_graph_memory_of(const wl_graph *g, wl_tensor t)
{
    return g_hash_table_lookup(g->memories, GUINT_TO_POINTER(t));
}

void wl_graph_copy(wl_graph *g, wl_tensor dst, wl_tensor src)
{
    add_step(g, STRATA_OP_COPY, "copy", &src, 1, &dst, 1, NULL, 0);
}

void wl_graph_kernel(wl_graph *g, const char *kernel, uint32_t n_dims, const uint64_t *dims, const char *mask)
{
    g_assert(g->steps->len > 0 && n_dims >= 1 && n_dims <= STRATA_MAX_DIMS);
    g_assert(g_array_index(g->steps, wl_step, g->steps->len - 1).kind == STRATA_OP_COMPUTE);
    wl_kernel_def *k = g_new(wl_kernel_def, 1);
    k->kernel = g_string_chunk_insert_const(g->strings, kernel);
    k->mask = mask ? g_string_chunk_insert_const(g->strings, mask) : NULL;
    k->shape = intern_shape(g, n_dims, dims);
    k->n_dims = n_dims;
    g_hash_table_replace(g->kernels, GUINT_TO_POINTER(g->steps->len - 1), k);
}

uint32_t wl_gemm_dims(uint64_t dims[4], uint64_t batch, uint64_t m, uint64_t k, uint64_t n)
{
    uint32_t nd = 0;
    if (batch != 1)
        dims[nd++] = batch;
    dims[nd++] = m;
    dims[nd++] = k;
    dims[nd++] = n;
    return nd;
}

void wl_graph_option(wl_graph *g, const char *key, const char *value)
{
    g_ptr_array_add(g->options, g_string_chunk_insert_const(g->strings, key));
    g_ptr_array_add(g->options, g_string_chunk_insert_const(g->strings, value));
    assert(g->options->len % 2 == 0); /* invariant 4 */
}

void wl_graph_stream(wl_graph *g, const char *stream)
{
    g->stream = name_id(g, stream);
}

void wl_graph_event(wl_graph *g, bool record, const char *event)
{
    add_step(g, record ? STRATA_OP_RECORD : STRATA_OP_WAIT, event, NULL, 0, NULL, 0, NULL, 0);
}

void wl_graph_collective(wl_graph *g, strata_op_kind kind, wl_tensor out, wl_tensor in, const char *axis)
{
    g_assert(strata_op_kind_is_collective(kind) && (kind != STRATA_OP_ALL_REDUCE || out == in));
    wl_step *s = add_step(g, kind, strata_op_kind_name(kind), &in, 1, &out, 1, NULL, 0);
    s->axis = name_id(g, axis);
}

void wl_graph_permute(wl_graph *g, wl_tensor out, wl_tensor in, const char *axis, int shift)
{
    g_assert(shift != 0 && shift >= -127 && shift <= 127);
    wl_step *s = add_step(g, STRATA_OP_COLLECTIVE_PERMUTE, strata_op_kind_name(STRATA_OP_COLLECTIVE_PERMUTE), &in, 1,
                          &out, 1, NULL, 0);
    s->axis = name_id(g, axis);
    s->aux = (gint8)shift;
}

void wl_graph_vary(wl_graph *g, uint32_t n, const uint64_t *rows)
{
    g_free(g->vary_rows);
    g->vary_rows = g_memdup2(rows, n * sizeof rows[0]);
    g->vary_n = n;
    g->vary_max = 0;
    for (uint32_t i = 0; i < n; i++)
        g->vary_max = MAX(g->vary_max, rows[i]);
}

void wl_graph_vary_step(wl_graph *g)
{
    g_assert(g->steps->len > 0 && g->vary_rows);
    wl_step *s = &g_array_index(g->steps, wl_step, g->steps->len - 1);
    g_assert(s->kind == STRATA_OP_COMPUTE);
    s->aux = 1;
}

const uint64_t *wl_graph_vary_rows(const wl_graph *g, uint32_t *n, uint64_t *max)
{
    *n = g->vary_n;
    *max = g->vary_max;
    return g->vary_rows;
}

uint32_t wl_graph_n_options(const wl_graph *g) { return g->options->len / 2; }

void wl_graph_option_at(const wl_graph *g, uint32_t i, const char **key, const char **value)
{
    *key = g_ptr_array_index(g->options, 2 * i);
    *value = g_ptr_array_index(g->options, 2 * i + 1);
}

uint32_t wl_graph_n_tensors(const wl_graph *g) { return g->tensors->len; }
/* From the extents and the dtype (not stored: a tensor stays 16 bytes);
 * wl_graph_tensor() checked that it fits in 64 bits. */
uint64_t wl_graph_bytes(const wl_graph *g, wl_tensor t)
{
    uint64_t bytes = 0;
    if (!strata_workload_bytes(wl_graph_elements(g, t), strata_dtype_bits(wl_graph_dtype(g, t)), &bytes))
        return UINT64_MAX; /* only in a graph whose overflow is set, which never streams */
    return bytes ? bytes : 1;
}
unsigned wl_graph_flags(const wl_graph *g, wl_tensor t) { return def(g, t)->flags; }
uint32_t wl_graph_n_steps(const wl_graph *g) { return g->steps->len; }
const char *wl_graph_overflow(const wl_graph *g) { return g->overflow; }

void wl_graph_step(const wl_graph *g, uint32_t step, wl_step_view *v)
{
    g_assert(step < g->steps->len);
    const wl_step *st = &g_array_index(g->steps, wl_step, step);
    const wl_tensor *ids = &g_array_index(g->ids, wl_tensor, st->first);
    *v = (wl_step_view){(strata_op_kind)st->kind,
                        st->label,
                        st->stream ? (const char *)g_ptr_array_index(g->names, st->stream) : STRATA_DEFAULT_STREAM,
                        st->flops,
                        ids,
                        ids + st->n_ins,
                        ids + st->n_ins + st->n_outs,
                        st->n_ins,
                        st->n_outs,
                        st->n_donates,
                        (const char *)g_ptr_array_index(g->names, st->axis),
                        NULL,
                        NULL,
                        0,
                        NULL,
                        st->kind == STRATA_OP_COLLECTIVE_PERMUTE ? st->aux : 0,
                        st->kind == STRATA_OP_COMPUTE && st->aux};
    const wl_kernel_def *k = g_hash_table_lookup(g->kernels, GUINT_TO_POINTER(step));
    if (k) {
        v->kernel = k->kernel;
        v->kdims = &g_array_index(g->shapes, uint64_t, k->shape);
        v->n_kdims = k->n_dims;
        v->mask = k->mask;
    }
}
