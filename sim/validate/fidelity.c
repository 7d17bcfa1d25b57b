/*
 * fidelity.c: how faithfully an allocator model replays an imported
 * PyTorch snapshot or profiler trace (validate/fidelity.h).
 *
 * The converted trace is replayed untimed by the replay of `strata alloc`
 * (replay/replay.h: the checker, one placement), which calls back after
 * every allocator call. Two figures are compared with the
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
 * The pinned host part of a snapshot (memory `host`) is replayed the same
 * way through caching-host against the host's own ground truth.
 *
 * Invariant: the replay is `strata alloc`'s own, so it honours the trace's
 * `option allocator.KEY=VALUE` lines (placement/placement.h: a base under
 * the spec's own values) and `release` ops exactly as `strata alloc` does.
 */
#include <string.h>

#include "alloc/alloc.h"
#include "core/error.h"
#include "validate/fidelity.h"
#include "replay/replay.h"

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
static void count_new_segments(const strata_allocator *a, const GArray *real, bool count,
                               int64_t *seen, strata_torch_fidelity *out)
{
    new_segments ns = {*seen, g_tree_new_full(cmp_number, NULL, NULL, NULL)};
    strata_allocator_walk(a, visit_block, &ns);
    match_state m = {real, out, count, *seen};
    g_tree_foreach(ns.sizes, match_segment, &m);
    *seen = m.max_number;
    g_tree_destroy(ns.sizes);
}

/* What the replay's callbacks keep between allocator calls. */
typedef struct measure {
    const strata_torch_summary *sum;
    strata_torch_fidelity *out;
    uint64_t reserved, n_segments; /* after the last call */
    int64_t seen;                  /* highest segment number seen */
} measure;

static void measure_opened(void *user, const strata_allocator *a)
{
    measure *m = user;
    strata_alloc_stats st;
    strata_allocator_stats(a, &st);
    m->reserved = st.reserved;
    m->n_segments = st.n_segments;
}

static void measure_op(void *user, uint64_t index, const strata_allocator *a)
{
    measure *m = user;
    strata_alloc_stats st;
    strata_allocator_stats(a, &st);
    if (st.reserved > m->out->model_peak_reserved)
        m->out->model_peak_reserved = st.reserved;
    if (st.reserved != m->reserved || st.n_segments != m->n_segments)
        count_new_segments(a, m->sum->segment_alloc_sizes, index >= m->sum->n_setup_ops, &m->seen, m->out);
    m->reserved = st.reserved;
    m->n_segments = st.n_segments;
}

/* Replays `memory` of the trace (NULL: the device's) and compares. */
static bool measure_memory(strata_source *trace, const strata_torch_summary *sum, const char *spec,
                           const char *memory, uint64_t capacity, bool ignore_limit,
                           strata_torch_fidelity *out, GError **err)
{
    memset(out, 0, sizeof *out);
    measure m = {.sum = sum, .out = out, .seen = -1};
    strata_replay_options opt = {
        .allocator = spec,
        .memory = memory,
        .capacity = capacity,
        .ignore_device_limit = ignore_limit,
        .opened = measure_opened,
        .after_op = measure_op,
        .user = &m,
    };
    strata_results *r = NULL;
    strata_replay_summary rs;
    bool ok = strata_replay_run(trace, &opt, &r, &rs, err);
    strata_results_free(r);
    const GArray *real = sum->segment_alloc_sizes;
    out->oom = ok && rs.oom;
    out->real_peak_reserved = sum->peak_reserved;
    out->real_final_reserved = sum->final_reserved;
    out->model_final_reserved = m.reserved;
    out->real_segment_allocs = real->len;
    out->peak_error = sum->peak_reserved
                          ? ((double)out->model_peak_reserved - (double)sum->peak_reserved) /
                                (double)sum->peak_reserved
                          : 0.0;
    return ok;
}

bool strata_torch_measure(strata_source *trace, const strata_torch_summary *sum,
                          const char *spec, uint64_t capacity, strata_torch_fidelity *out,
                          GError **err)
{
    /* a capacity given wins over the inferred limit */
    return measure_memory(trace, sum, spec, NULL, capacity ? capacity : STRATA_TORCH_CAPACITY,
                          capacity != 0, out, err);
}

bool strata_torch_measure_host(strata_source *trace, const strata_torch_summary *sum,
                               uint64_t capacity, strata_torch_fidelity *out, GError **err)
{
    strata_torch_summary truth = {
        .peak_reserved = sum->host_peak_reserved,
        .final_reserved = sum->host_final_reserved,
        .n_setup_ops = sum->n_setup_ops,
        .segment_alloc_sizes = sum->host_segment_alloc_sizes,
    };
    return measure_memory(trace, &truth, "caching-host", "host",
                          capacity ? capacity : STRATA_TORCH_HOST_CAPACITY, true, out, err);
}

bool strata_kineto_measure(const char *path, const strata_kineto_summary *sum, const char *spec,
                           uint64_t capacity, strata_torch_fidelity *out, GError **err)
{
    strata_kineto_options opt = {.device = sum->device, .memory_only = true};
    strata_kineto_summary again;
    strata_source *src = strata_kineto_import(path, &opt, &again, err);
    if (src == NULL)
        return false;
    strata_torch_summary truth = {
        .peak_reserved = sum->peak_reserved,
        .final_reserved = sum->final_reserved,
        .n_setup_ops = again.n_setup_ops,
        .segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
    };
    bool ok = strata_torch_measure(src, &truth, spec, capacity, out, err);
    g_array_free(truth.segment_alloc_sizes, TRUE);
    strata_source_free(src);
    return ok;
}
