/*
 * offline.c: an offline (static) planner. It sees every buffer's lifetime
 * before the replay and assigns each an offset so that buffers live at the
 * same time never overlap, minimising the height of the arena.
 *
 * Design: the greedy orderings and local search of offline_greedy.c, then,
 * while the height is above the lower bound, the bounded exact search of
 * offline_search.c. Lifetimes are ranked by real time when the trace stamps
 * allocs and frees with at= (as the MiniMalloc import does), else by steps.
 * The lower bound is the peak of live bytes (no plan can be lower); the
 * result reports both. Everything is deterministic (fixed seeds).
 *
 * Invariants: after plan(), every buffer has an offset, and two buffers
 * whose lifetimes [start, end) intersect occupy disjoint address ranges;
 * height = max(offset + size) >= lower bound. alloc() returns the planned
 * offset and fails (out of memory) when the block would pass the capacity,
 * or when the buffer was not planned.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "alloc/alloc.h"
#include "alloc/offline.h"
#include "core/error.h"

/* The live blocks, indexed by the plan's order (offset, then id): a
 * segment tree over that static order whose nodes summarise their live
 * blocks (first offset, highest end, largest gap between them, and whether
 * any two of them overlap), so the largest free gap is known after each
 * alloc and free in O(log n). Two blocks at one offset (a plan used with
 * lifetimes it was not made for) both stay live, so the walk shows them and
 * strata_allocator_check() reports the overlap. */
typedef struct offline_node {
    uint64_t first, end, gap; /* first offset, highest end, largest inner gap */
    uint32_t count;           /* live blocks below */
    bool overlap;             /* two of them overlap */
} offline_node;

typedef struct offline {
    uint64_t capacity, alignment;
    int64_t iterations, search_nodes;
    offline_buf *bufs;   /* planned buffers */
    size_t n;
    GHashTable *plan;    /* &buf.id -> offline_buf */
    uint32_t *slot;      /* buffer -> its leaf (its rank by offset, then id) */
    uint32_t *leaf_buf;  /* leaf -> buffer */
    uint64_t *requested; /* buffer -> bytes asked for while live */
    offline_node *tree;  /* 2 * leaves nodes, root at 1 */
    size_t leaves;
    uint64_t height, lower_bound, high_water;
    uint64_t allocated, used_bytes;
} offline;

static offline_node offline_join(offline_node a, offline_node b)
{
    if (!a.count)
        return b;
    if (!b.count)
        return a;
    uint64_t between = b.first > a.end ? b.first - a.end : 0;
    return (offline_node){.first = a.first,
                          .end = MAX(a.end, b.end),
                          .gap = MAX(MAX(a.gap, b.gap), between),
                          .count = a.count + b.count,
                          .overlap = a.overlap || b.overlap || a.end > b.first};
}

static void offline_set_leaf(offline *o, size_t buf, bool live)
{
    size_t k = o->leaves + o->slot[buf];
    const offline_buf *b = &o->bufs[buf];
    o->tree[k] = live ? (offline_node){.first = b->offset, .end = b->offset + b->size, .count = 1}
                      : (offline_node){0};
    for (k /= 2; k >= 1; k /= 2)
        o->tree[k] = offline_join(o->tree[2 * k], o->tree[2 * k + 1]);
}

static int offline_cmp_slot(const void *a, const void *b, void *user)
{
    const offline_buf *bufs = user;
    const offline_buf *x = &bufs[*(const uint32_t *)a], *y = &bufs[*(const uint32_t *)b];
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The leaves of the planned buffers, by offset then id. */
static void offline_index_plan(offline *o)
{
    g_free(o->slot);
    g_free(o->leaf_buf);
    g_free(o->requested);
    g_free(o->tree);
    o->leaves = 1;
    while (o->leaves < o->n)
        o->leaves *= 2;
    o->slot = g_new(uint32_t, o->n ? o->n : 1);
    o->leaf_buf = g_new(uint32_t, o->n ? o->n : 1);
    o->requested = g_new0(uint64_t, o->n ? o->n : 1);
    o->tree = g_new0(offline_node, 2 * o->leaves);
    for (size_t i = 0; i < o->n; i++)
        o->leaf_buf[i] = (uint32_t)i;
    g_qsort_with_data(o->leaf_buf, (gint)o->n, sizeof *o->leaf_buf, offline_cmp_slot, o->bufs);
    for (size_t i = 0; i < o->n; i++)
        o->slot[o->leaf_buf[i]] = (uint32_t)i;
}

static const strata_param_def offline_params[] = {
    {"iterations", STRATA_PARAM_INT, "1000",
     "steps of the local search that improves the greedy order (0: greedy orderings only); "
     "at most 2e9/n^2 steps for n buffers (at least 10)", NULL},
    {"search_nodes", STRATA_PARAM_INT, "2500000",
     "node budget of the exact search (branch and bound) after the heuristics, in all; a node "
     "with m candidates costs 1 + m/512; 0: off (also off above 4096 buffers)",
     NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static void *offline_create(const strata_alloc_config *cfg, GError **err)
{
    int64_t iterations = strata_params_int(cfg->params, "iterations");
    if (iterations < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "iterations must be >= 0, got %" G_GINT64_FORMAT, iterations);
        return NULL;
    }
    offline *o = g_new0(offline, 1);
    o->capacity = cfg->capacity;
    o->alignment = cfg->alignment ? cfg->alignment : 1;
    o->iterations = iterations;
    o->search_nodes = strata_params_int(cfg->params, "search_nodes");
    o->plan = g_hash_table_new(g_int64_hash, g_int64_equal);
    return o;
}

static void offline_destroy(void *self)
{
    offline *o = self;
    g_hash_table_destroy(o->plan);
    g_free(o->slot);
    g_free(o->leaf_buf);
    g_free(o->requested);
    g_free(o->tree);
    g_free(o->bufs);
    g_free(o);
}

/* ---- the buffers of a plan ---- */

/* Lifetimes arrive as op indices, one op per index. Compress them to
 * "steps": a step is a run of frees followed by a run of allocs (what one
 * instant of a trace from a timed source looks like), so lifetimes measure
 * how many steps a buffer lives, as the rank heuristics expect, not how many
 * unrelated ops happen in between. Overlaps are kept exactly: an alloc and a
 * free in the same step are ordered free first, as in the op stream. */
typedef struct offline_endpoint {
    uint64_t at;
    bool is_start;
    size_t buf;
} offline_endpoint;

static int offline_cmp_endpoint(const void *a, const void *b)
{
    const offline_endpoint *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->is_start != y->is_start)
        return x->is_start ? 1 : -1; /* ends first */
    return x->buf < y->buf ? -1 : x->buf > y->buf ? 1 : 0;
}

static void offline_compress_times(offline_buf *bufs, size_t n)
{
    offline_endpoint *ep = g_new(offline_endpoint, 2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        ep[2 * i] = (offline_endpoint){bufs[i].start, true, i};
        ep[2 * i + 1] = (offline_endpoint){bufs[i].end, false, i};
    }
    qsort(ep, 2 * n, sizeof *ep, offline_cmp_endpoint);
    uint64_t step = 0;
    bool prev_start = false;
    for (size_t k = 0; k < 2 * n; k++) {
        if (!ep[k].is_start && prev_start)
            step++;
        prev_start = ep[k].is_start;
        if (ep[k].is_start)
            bufs[ep[k].buf].start = step;
        else
            bufs[ep[k].buf].end = step;
    }
    for (size_t i = 0; i < n; i++)
        if (bufs[i].end <= bufs[i].start)
            bufs[i].end = bufs[i].start + 1; /* a buffer freed at once still lives one step */
    g_free(ep);
}

/* The buffers of lifetimes l: sizes rounded to the alignment, lifetimes in
 * steps, widths in real time when every lifetime has it. */
static bool offline_buffers(offline *o, const strata_lifetime *l, size_t n, GError **err)
{
    g_free(o->bufs);
    o->bufs = g_new0(offline_buf, n ? n : 1);
    o->n = n;
    for (size_t i = 0; i < n; i++) {
        uint64_t size = l[i].size == 0 ? o->alignment
                                       : (l[i].size + o->alignment - 1) & ~(o->alignment - 1);
        if (size < l[i].size || l[i].end < l[i].start) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "offline: buffer %" G_GUINT64_FORMAT " has a bad size or lifetime", l[i].id);
            return false;
        }
        o->bufs[i] = (offline_buf){.id = l[i].id, .size = size, .start = l[i].start,
                                   .end = l[i].end == l[i].start ? l[i].start + 1 : l[i].end};
    }
    offline_compress_times(o->bufs, n);
    /* real lifetime lengths when every buffer has them (ranks only) */
    bool timed = n > 0;
    for (size_t i = 0; i < n && timed; i++)
        timed = l[i].has_times && l[i].t_end > l[i].t_start && l[i].end != UINT64_MAX;
    double t_unit = 1.0;
    if (timed) { /* scale so that the shortest lifetime is about one unit */
        t_unit = l[0].t_end - l[0].t_start;
        for (size_t i = 1; i < n; i++)
            if (l[i].t_end - l[i].t_start < t_unit)
                t_unit = l[i].t_end - l[i].t_start;
    }
    for (size_t i = 0; i < n; i++)
        o->bufs[i].width = timed ? (l[i].t_end - l[i].t_start) / t_unit
                                 : (double)(o->bufs[i].end - o->bufs[i].start);
    return true;
}

void offline_show(strata_progress *progress, size_t n, uint64_t height, uint64_t lower_bound,
                  const char *stage)
{
    if (height == UINT64_MAX)
        strata_progress_update(progress, "offline: %zu buffers, lower bound %" G_GUINT64_FORMAT
                               " B, %s", n, lower_bound, stage);
    else
        strata_progress_update(progress, "offline: %zu buffers, height %" G_GUINT64_FORMAT
                               " B, lower bound %" G_GUINT64_FORMAT " B (x%.4f), %s", n, height,
                               lower_bound, lower_bound ? (double)height / (double)lower_bound : 1.0,
                               stage);
}

#ifndef NDEBUG
typedef struct plan_live {
    uint64_t offset;
    size_t buf;
} plan_live;

static gint plan_cmp_live(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const plan_live *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->buf < y->buf ? -1 : x->buf > y->buf;
}

/* The plan (O(n log n), once per plan): sweeping the steps, each buffer is
 * disjoint from the live ones beside it by address (they are disjoint
 * among themselves, so that covers them all); height = max(offset + size)
 * >= lower bound. */
static bool offline_plan_ok(const offline_buf *bufs, size_t n, uint64_t height, uint64_t lower_bound)
{
    offline_endpoint *ep = g_new(offline_endpoint, 2 * n + 1);
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        ep[2 * i] = (offline_endpoint){bufs[i].start, true, i};
        ep[2 * i + 1] = (offline_endpoint){bufs[i].end, false, i};
        top = MAX(top, bufs[i].offset + bufs[i].size);
    }
    qsort(ep, 2 * n, sizeof *ep, offline_cmp_endpoint); /* ends first at a step */
    plan_live *keys = g_new(plan_live, n ? n : 1);
    GTree *live = g_tree_new_full(plan_cmp_live, NULL, NULL, NULL);
    bool ok = bufs != NULL || n == 0;
    for (size_t k = 0; ok && k < 2 * n; k++) {
        size_t i = ep[k].buf;
        keys[i] = (plan_live){bufs[i].offset, i};
        if (!ep[k].is_start) {
            g_tree_remove(live, &keys[i]);
            continue;
        }
        GTreeNode *at = g_tree_insert_node(live, &keys[i], &keys[i]);
        GTreeNode *before = g_tree_node_previous(at), *after = g_tree_node_next(at);
        if (before) {
            const plan_live *p = g_tree_node_key(before);
            ok = bufs[p->buf].offset + bufs[p->buf].size <= bufs[i].offset;
        }
        if (ok && after) {
            const plan_live *q = g_tree_node_key(after);
            ok = bufs[i].offset + bufs[i].size <= bufs[q->buf].offset;
        }
    }
    g_tree_destroy(live);
    g_free(keys);
    g_free(ep);
    return ok && (n == 0 || (top == height && height >= lower_bound));
}
#endif

static bool offline_plan(void *self, const strata_lifetime *l, size_t n, strata_progress *progress,
                         GError **err)
{
    offline *o = self;
    g_hash_table_remove_all(o->plan);
    if (!offline_buffers(o, l, n, err))
        return false;
    o->lower_bound = offline_lower_bound(o->bufs, n);
    uint64_t *offsets = g_new0(uint64_t, n ? n : 1);
    uint64_t height = offline_greedy(o->bufs, n, o->iterations, o->lower_bound, offsets, progress);
    offline_exact(o->bufs, n, o->lower_bound, o->search_nodes, &height, offsets, progress);
    for (size_t i = 0; i < n; i++) {
        o->bufs[i].offset = offsets[i];
        g_hash_table_insert(o->plan, &o->bufs[i].id, &o->bufs[i]);
    }
    assert(offline_plan_ok(o->bufs, n, height, o->lower_bound)); /* disjoint; height >= lower bound */
    offline_index_plan(o);
    o->height = n ? height : 0;
    g_free(offsets);
    return true;
}

static void offline_free(void *self, uint64_t id);

static bool offline_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    offline *o = self;
    const offline_buf *b = g_hash_table_lookup(o->plan, &id);
    if (!b || b->size < size || b->offset > o->capacity || b->size > o->capacity - b->offset)
        return false;
    size_t i = (size_t)(b - o->bufs);
    if (o->tree[o->leaves + o->slot[i]].count)
        offline_free(o, id); /* allocated again while live: the new request replaces it */
    o->requested[i] = size;
    offline_set_leaf(o, i, true);
    o->allocated += size;
    o->used_bytes += b->size;
    if (b->offset + b->size > o->high_water)
        o->high_water = b->offset + b->size;
    *offset = b->offset;
    return true;
}

static void offline_free(void *self, uint64_t id)
{
    offline *o = self;
    const offline_buf *b = g_hash_table_lookup(o->plan, &id);
    if (!b)
        return;
    size_t i = (size_t)(b - o->bufs);
    if (!o->tree[o->leaves + o->slot[i]].count)
        return;
    o->allocated -= o->requested[i];
    o->used_bytes -= b->size;
    offline_set_leaf(o, i, false);
}

/* Calls visit(o, buffer, user) for each live block by offset, then id. */
static void offline_each_live(const offline *o, size_t node,
                              void (*visit)(const offline *, size_t, void *), void *user)
{
    if (!o->tree || !o->tree[node].count)
        return;
    if (node >= o->leaves) {
        visit(o, o->leaf_buf[node - o->leaves], user);
        return;
    }
    offline_each_live(o, 2 * node, visit, user);
    offline_each_live(o, 2 * node + 1, visit, user);
}

typedef struct offline_gap_ctx {
    uint64_t cursor, largest;
} offline_gap_ctx;

static void offline_gap_visit(const offline *o, size_t buf, void *data)
{
    const offline_buf *b = &o->bufs[buf];
    offline_gap_ctx *ctx = data;
    if (b->offset > ctx->cursor && b->offset - ctx->cursor > ctx->largest)
        ctx->largest = b->offset - ctx->cursor;
    if (b->offset + b->size > ctx->cursor)
        ctx->cursor = b->offset + b->size;
}

/* The largest free gap below the high-water mark: from the root's summary,
 * or by a walk when live blocks overlap (their gaps do not add up then). */
static uint64_t offline_largest_free(const offline *o)
{
    offline_gap_ctx ctx = {0, 0};
    const offline_node *root = o->tree ? &o->tree[1] : NULL;
    if (root && root->count && !root->overlap)
        ctx = (offline_gap_ctx){root->end, MAX(root->first, root->gap)};
    else
        offline_each_live(o, 1, offline_gap_visit, &ctx);
    if (o->high_water > ctx.cursor && o->high_water - ctx.cursor > ctx.largest)
        ctx.largest = o->high_water - ctx.cursor;
    return ctx.largest;
}

static void offline_stats(const void *self, strata_alloc_stats *out)
{
    const offline *o = self;
    *out = (strata_alloc_stats){.allocated = o->allocated,
                                .reserved = o->high_water,
                                .free_in_reserved = o->high_water - o->used_bytes,
                                .internal_waste = o->used_bytes - o->allocated,
                                .n_segments = 1,
                                .largest_free = offline_largest_free(o),
                                .planned_height = o->height,
                                .plan_lower_bound = o->lower_bound};
}

static void offline_walk_visit(const offline *o, size_t buf, void *data)
{
    const offline_buf *b = &o->bufs[buf];
    const strata_block_walk *w = data;
    strata_block_visit_fields(w->visit, w->user, b->offset, b->size, true, b->id, o->requested[buf], 0);
}

static void offline_walk(const void *self, strata_block_visit visit, void *user)
{
    const offline *o = self;
    strata_block_walk w = {visit, user};
    offline_each_live(o, 1, offline_walk_visit, &w);
}

/* The planner's hooks, shared by its two rows (offline and xla). */
#define OFFLINE_HOOKS                                                                                                 \
    .create = offline_create, .destroy = offline_destroy, .alloc = offline_alloc, .free = offline_free,               \
    .stats = offline_stats, .walk = offline_walk, .plan = offline_plan

const strata_alloc_type strata_alloc_offline = {
    .name = "offline",
    .summary = "offline planner: greedy orders, local search, exact search to the lower bound",
    .params = offline_params,
    OFFLINE_HOOKS,
};

/* XLA's buffer assignment as the TPU compiler runs it: one program's
 * buffers (async starts and dones included) live from their first to their
 * last use in the program's sequential schedule, and the heap simulator
 * places them all before the program runs (GlobalDecreasingSizeBestFitHeap,
 * openxla xla/service/heap_simulator/heap_simulator.h: buffers sorted by
 * size or by live range, each put in the best-fitting free space-time
 * chunk; ChooseBestHeapAlgorithm keeps the lowest of several orders).
 * strata's planner does the same over several greedy orders and a short
 * local search; the exact search stays off, as in XLA. Buffers the program
 * never frees (arguments, parameters, optimizer state, outputs) live to its
 * end, so they persist across steps. */
static const strata_param_def xla_params[] = {
    {"iterations", STRATA_PARAM_INT, "100",
     "steps of the local search after the greedy orders (0: the greedy orders only, as XLA's "
     "heap simulator)", NULL},
    {"search_nodes", STRATA_PARAM_INT, "0", "node budget of the exact search (0: off, as in XLA)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

const strata_alloc_type strata_alloc_xla = {
    .name = "xla",
    .summary = "XLA's buffer assignment: one program's buffers planned in its op order across streams",
    .params = xla_params,
    OFFLINE_HOOKS,
    .one_program = true,
};
