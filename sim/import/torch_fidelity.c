/*
 * torch_fidelity.c: how faithfully an allocator model replays an imported
 * PyTorch snapshot (strata_torch_measure(), declared in torch.h).
 *
 * The converted trace is replayed untimed through one allocator instance
 * (models/alloc), as `strata alloc` does. Two figures are compared with the
 * snapshot's ground truth (strata_torch_summary, from its own events):
 *  - peak reserved bytes: the model's maximum of stats.reserved after any op
 *    against the real maximum of initial reserved + segment_alloc -
 *    segment_free over the events;
 *  - segment allocations: whenever an op changes the model's reserved bytes
 *    or segment count, a walk over its blocks finds the segments numbered
 *    above any seen before (allocators number segments in creation order);
 *    each is one model segment allocation, of the bytes of its blocks. In
 *    the event part of the trace, the i-th one matches when the i-th real
 *    segment_alloc has the same size.
 *
 * Invariant: the replay honours the trace's `option allocator.KEY=VALUE`
 * lines by appending them to the allocator spec, and `release` ops by
 * strata_allocator_release(), exactly as `strata alloc` must.
 */
#include <string.h>

#include "alloc/alloc.h"
#include "core/error.h"
#include "import/torch.h"

typedef struct replay {
    GHashTable *buffers; /* name -> id+1 */
    GHashTable *streams; /* name -> index+1 */
    uint64_t next_id;
} replay;

static uint32_t stream_index(replay *r, const char *name)
{
    gpointer v = g_hash_table_lookup(r->streams, name);
    if (v)
        return (uint32_t)(GPOINTER_TO_SIZE(v) - 1);
    guint n = g_hash_table_size(r->streams);
    g_hash_table_insert(r->streams, g_strdup(name), GSIZE_TO_POINTER((gsize)n + 1));
    return n;
}

/* Segments numbered above `seen`, by number: number -> bytes. */
typedef struct new_segments {
    int64_t seen;
    GTree *sizes; /* uint32 number -> uint64 bytes (both in pointers) */
} new_segments;

static gint cmp_number(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

static void visit_block(const strata_block *b, void *user)
{
    new_segments *ns = user;
    if ((int64_t)b->segment <= ns->seen)
        return;
    gpointer key = GSIZE_TO_POINTER((gsize)b->segment);
    gsize bytes = GPOINTER_TO_SIZE(g_tree_lookup(ns->sizes, key));
    g_tree_insert(ns->sizes, key, GSIZE_TO_POINTER(bytes + b->size));
}

typedef struct match_state {
    const GArray *real;
    strata_torch_fidelity *out;
    bool count;
    int64_t max_number;
} match_state;

static gboolean match_segment(gpointer key, gpointer value, gpointer user)
{
    match_state *m = user;
    uint64_t size = GPOINTER_TO_SIZE(value);
    if (m->count) {
        if (m->out->model_segment_allocs < m->real->len &&
            g_array_index(m->real, uint64_t, m->out->model_segment_allocs) == size)
            m->out->matched_segment_allocs++;
        m->out->model_segment_allocs++;
    }
    m->max_number = (int64_t)GPOINTER_TO_SIZE(key);
    return FALSE;
}

/* Counts the segments the last op created (see the file comment). */
static void count_new_segments(strata_allocator *a, const GArray *real, bool count,
                               int64_t *seen, strata_torch_fidelity *out)
{
    new_segments ns = {*seen, g_tree_new_full(cmp_number, NULL, NULL, NULL)};
    strata_allocator_walk(a, visit_block, &ns);
    match_state m = {real, out, count, *seen};
    g_tree_foreach(ns.sizes, match_segment, &m);
    *seen = m.max_number;
    g_tree_destroy(ns.sizes);
}

static bool declares(const strata_alloc_type *type, const char *key)
{
    for (const strata_param_def *d = type->params; d->name; d++)
        if (strcmp(d->name, key) == 0)
            return true;
    return false;
}

/* spec with the trace's allocator options that its allocator declares (the
 * others are for other consumers, as traces/FORMAT.md says), less
 * device_limit when the capacity was given; NULL with err. */
static char *spec_with_options(strata_source *trace, const char *spec, bool explicit_capacity,
                               GError **err)
{
    if (!strata_source_rewind(trace, err))
        return NULL;
    char *type_name = NULL, *type_kv = NULL;
    strata_split_spec(spec, &type_name, &type_kv);
    const strata_alloc_type *type = strata_alloc_type_find(type_name);
    g_free(type_name);
    g_free(type_kv);
    GString *full = g_string_new(spec);
    bool has_kv = strchr(spec, ':') != NULL;
    const strata_op *op;
    int rc;
    while ((rc = strata_source_next(trace, &op, err)) == 1) {
        if (op->kind != STRATA_OP_OPTION)
            break;
        if (explicit_capacity && strcmp(op->name, "allocator.device_limit") == 0)
            continue;
        if (type && type->params && g_str_has_prefix(op->name, "allocator.") &&
            declares(type, op->name + strlen("allocator."))) {
            g_string_append_printf(full, "%s%s=%s", has_kv ? "," : ":",
                                   op->name + strlen("allocator."), op->value);
            has_kv = true;
        }
    }
    if (rc < 0 || !strata_source_rewind(trace, err)) {
        g_string_free(full, TRUE);
        return NULL;
    }
    return g_string_free(full, FALSE);
}

bool strata_torch_measure(strata_source *trace, const strata_torch_summary *sum,
                          const char *spec, uint64_t capacity, strata_torch_fidelity *out,
                          GError **err)
{
    memset(out, 0, sizeof *out);
    char *full = spec_with_options(trace, spec, capacity != 0, err);
    if (full == NULL)
        return false;
    strata_allocator *a = strata_allocator_new(full, capacity ? capacity : STRATA_TORCH_CAPACITY, 0, err);
    g_free(full);
    if (a == NULL)
        return false;

    replay r = {
        .buffers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    };
    uint64_t n_ops = 0; /* non-option ops seen */
    strata_alloc_stats st;
    strata_allocator_stats(a, &st);
    uint64_t reserved = st.reserved, n_segments = st.n_segments;
    int64_t seen = -1; /* highest segment number seen */
    const GArray *real = sum->segment_alloc_sizes;
    bool ok = true;
    const strata_op *op;
    int rc;
    while ((rc = strata_source_next(trace, &op, err)) == 1) {
        if (op->kind == STRATA_OP_OPTION)
            continue;
        bool events_part = n_ops >= sum->n_setup_ops;
        n_ops++;
        switch (op->kind) {
        case STRATA_OP_ALLOC: {
            uint64_t id = r.next_id++, offset;
            g_hash_table_replace(r.buffers, g_strdup(op->name), GSIZE_TO_POINTER(id + 1));
            if (!strata_allocator_alloc(a, id, op->size, stream_index(&r, op->stream), &offset)) {
                out->oom = true;
                goto done;
            }
            break;
        }
        case STRATA_OP_FREE: {
            gpointer v = g_hash_table_lookup(r.buffers, op->name);
            if (v == NULL) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: op %" G_GUINT64_FORMAT ": free of '%s', which is not live",
                            strata_source_origin(trace), n_ops, op->name);
                ok = false;
                goto done;
            }
            strata_allocator_free_block(a, GPOINTER_TO_SIZE(v) - 1);
            g_hash_table_remove(r.buffers, op->name);
            break;
        }
        case STRATA_OP_RELEASE:
            strata_allocator_release(a);
            break;
        default:
            break;
        }
        strata_allocator_stats(a, &st);
        if (st.reserved > out->model_peak_reserved)
            out->model_peak_reserved = st.reserved;
        if (st.reserved != reserved || st.n_segments != n_segments)
            count_new_segments(a, real, events_part, &seen, out);
        reserved = st.reserved;
        n_segments = st.n_segments;
    }
    if (rc < 0)
        ok = false;
done:
    out->real_peak_reserved = sum->peak_reserved;
    out->real_final_reserved = sum->final_reserved;
    out->model_final_reserved = reserved;
    out->real_segment_allocs = real->len;
    out->peak_error = sum->peak_reserved
                          ? ((double)out->model_peak_reserved - (double)sum->peak_reserved) /
                                (double)sum->peak_reserved
                          : 0.0;
    g_hash_table_unref(r.buffers);
    g_hash_table_unref(r.streams);
    strata_allocator_free(a);
    return ok;
}
