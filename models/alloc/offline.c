/*
 * offline.c: an offline (static) planner. It sees every buffer's lifetime
 * before the replay and assigns each an offset so that buffers live at the
 * same time never overlap, minimising the height of the arena.
 *
 * Design: the greedy-by-size planner of TFLite (ArenaPlanner /
 * GreedyMemoryPlanner) and XLA's heap simulator (GlobalDecreasingSizeBestFit
 * tried with several orderings, the best kept):
 *  - a placement pass takes buffers in a given order and puts each one in
 *    the best-fitting gap (smallest gap that holds it; lowest offset among
 *    equals) left between the already placed buffers whose lifetimes
 *    overlap it, or on top of them when no gap holds it; a first-fit
 *    variant takes the lowest gap;
 *  - orderings tried: size, then lifetime (TFLite); lifetime, then size;
 *    area (size x lifetime, XLA's spatial-temporal order); start time;
 *  - then a deterministic local search (fixed seed, `iterations` steps):
 *    move a buffer that reaches the current height, or a random one, to an
 *    earlier position in the order, and keep the new order when the height
 *    does not grow.
 * The lower bound is the peak of live bytes (no plan can be lower); the
 * result reports both.
 *
 * Invariants: after plan(), every buffer has an offset, and two buffers
 * whose lifetimes [start, end) intersect occupy disjoint address ranges;
 * height = max(offset + size) >= lower bound. alloc() returns the planned
 * offset and fails (out of memory) when the block would pass the capacity,
 * or when the buffer was not planned.
 */
#include <stdlib.h>
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"

typedef struct offline_buf {
    uint64_t id, size, start, end; /* size rounded to the alignment */
    uint64_t offset;
} offline_buf;

typedef struct offline_live {
    uint64_t id, offset, size, requested;
} offline_live;

typedef struct offline {
    uint64_t capacity, alignment;
    int64_t iterations;
    bool planned;
    offline_buf *bufs;   /* planned buffers */
    size_t n;
    GHashTable *plan;    /* &buf.id -> offline_buf */
    GHashTable *live;    /* &live.id -> offline_live */
    GTree *live_by_offset;
    uint64_t height, lower_bound, high_water;
    uint64_t allocated, used_bytes;
} offline;

static const strata_param_def offline_params[] = {
    {"iterations", STRATA_PARAM_INT, "3000",
     "steps of the local search that improves the greedy order (0: greedy orderings only)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static gint offline_cmp_offset(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

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
    o->plan = g_hash_table_new(g_int64_hash, g_int64_equal);
    o->live = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    o->live_by_offset = g_tree_new_full(offline_cmp_offset, NULL, NULL, NULL);
    return o;
}

static void offline_destroy(void *self)
{
    offline *o = self;
    g_hash_table_destroy(o->plan);
    g_hash_table_destroy(o->live);
    g_tree_destroy(o->live_by_offset);
    g_free(o->bufs);
    g_free(o);
}

/* ---- the placement pass ---- */

typedef struct offline_placer {
    const offline_buf *bufs;
    size_t n;
    size_t *placed;      /* indices of placed buffers, by offset */
    size_t n_placed;
    uint64_t *offsets;   /* per buffer */
} offline_placer;

static bool offline_overlap(const offline_buf *a, const offline_buf *b)
{
    return a->start < b->end && b->start < a->end;
}

/* Place bufs in `order`; returns the height. best_fit: smallest gap, else lowest. */
static uint64_t offline_place(offline_placer *pl, const size_t *order, bool best_fit)
{
    uint64_t height = 0;
    pl->n_placed = 0;
    for (size_t k = 0; k < pl->n; k++) {
        const offline_buf *b = &pl->bufs[order[k]];
        uint64_t cursor = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        for (size_t i = 0; i < pl->n_placed; i++) {
            size_t j = pl->placed[i];
            const offline_buf *p = &pl->bufs[j];
            if (!offline_overlap(b, p))
                continue;
            uint64_t off = pl->offsets[j];
            if (off > cursor) {
                uint64_t gap = off - cursor;
                if (gap >= b->size && (best_fit ? gap < best_gap : best == UINT64_MAX)) {
                    best = cursor;
                    best_gap = gap;
                }
            }
            if (off + p->size > cursor)
                cursor = off + p->size;
        }
        if (best == UINT64_MAX)
            best = cursor;
        pl->offsets[order[k]] = best;
        if (best + b->size > height)
            height = best + b->size;
        /* insert into placed, by offset */
        size_t at = pl->n_placed;
        while (at > 0 && pl->offsets[pl->placed[at - 1]] > best) {
            pl->placed[at] = pl->placed[at - 1];
            at--;
        }
        pl->placed[at] = order[k];
        pl->n_placed++;
    }
    return height;
}

/* Orderings (qsort_r-free: a key per buffer, then a stable sort by key). */
typedef struct offline_key {
    uint64_t k1, k2;
    size_t index;
} offline_key;

static int offline_cmp_key(const void *a, const void *b)
{
    const offline_key *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 > y->k1 ? -1 : 1; /* descending */
    if (x->k2 != y->k2)
        return x->k2 > y->k2 ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

enum { ORDER_SIZE, ORDER_LIFETIME, ORDER_AREA, ORDER_START, ORDER__COUNT };

static void offline_order(const offline_buf *bufs, size_t n, int how, size_t *order)
{
    offline_key *keys = g_new(offline_key, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t life = bufs[i].end - bufs[i].start;
        keys[i].index = i;
        switch (how) {
        case ORDER_SIZE: keys[i].k1 = bufs[i].size; keys[i].k2 = life; break;
        case ORDER_LIFETIME: keys[i].k1 = life; keys[i].k2 = bufs[i].size; break;
        case ORDER_AREA:
            keys[i].k1 = (uint64_t)((double)bufs[i].size * (double)life);
            keys[i].k2 = bufs[i].size;
            break;
        default: keys[i].k1 = UINT64_MAX - bufs[i].start; keys[i].k2 = bufs[i].size; break;
        }
    }
    qsort(keys, n, sizeof *keys, offline_cmp_key);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].index;
    g_free(keys);
}

static uint64_t offline_lower_bound(const offline_buf *bufs, size_t n)
{
    /* Sweep: +size at start, -size at end; ends before starts at equal times. */
    typedef struct { uint64_t t; int64_t delta; } ev;
    ev *evs = g_new(ev, 2 * n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        evs[m++] = (ev){bufs[i].start, (int64_t)bufs[i].size};
        if (bufs[i].end != UINT64_MAX)
            evs[m++] = (ev){bufs[i].end, -(int64_t)bufs[i].size};
    }
    offline_key *keys = g_new(offline_key, m ? m : 1);
    for (size_t i = 0; i < m; i++) {
        /* descending sort: invert t; at equal t, frees (negative) first */
        keys[i].k1 = UINT64_MAX - evs[i].t;
        keys[i].k2 = evs[i].delta < 0 ? 1 : 0;
        keys[i].index = i;
    }
    qsort(keys, m, sizeof *keys, offline_cmp_key);
    uint64_t live = 0, peak = 0;
    for (size_t i = 0; i < m; i++) {
        int64_t d = evs[keys[i].index].delta;
        live = d < 0 ? live - (uint64_t)(-d) : live + (uint64_t)d;
        if (live > peak)
            peak = live;
    }
    g_free(keys);
    g_free(evs);
    return peak;
}

static bool offline_plan(void *self, const strata_lifetime *l, size_t n, GError **err)
{
    offline *o = self;
    g_free(o->bufs);
    g_hash_table_remove_all(o->plan);
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
    o->lower_bound = offline_lower_bound(o->bufs, n);

    offline_placer pl = {.bufs = o->bufs, .n = n};
    pl.placed = g_new(size_t, n ? n : 1);
    pl.offsets = g_new0(uint64_t, n ? n : 1);
    size_t *order = g_new(size_t, n ? n : 1);
    size_t *best_order = g_new(size_t, n ? n : 1);
    uint64_t *best_offsets = g_new0(uint64_t, n ? n : 1);
    uint64_t best = UINT64_MAX;
    bool best_fit_mode = true;
    for (int how = 0; how < ORDER__COUNT; how++) {
        offline_order(o->bufs, n, how, order);
        for (int fit = 0; fit < 2; fit++) {
            uint64_t h = offline_place(&pl, order, fit == 0);
            if (h < best) {
                best = h;
                best_fit_mode = fit == 0;
                memcpy(best_order, order, n * sizeof *order);
                memcpy(best_offsets, pl.offsets, n * sizeof *pl.offsets);
            }
        }
    }
    /* Local search over the order, deterministic. */
    GRand *rng = g_rand_new_with_seed(0x5eed);
    memcpy(order, best_order, n * sizeof *order);
    for (int64_t it = 0; it < o->iterations && n > 1 && best > o->lower_bound; it++) {
        memcpy(order, best_order, n * sizeof *order);
        size_t from;
        if (g_rand_boolean(rng)) {
            /* a buffer that reaches the height */
            size_t tops[64], n_tops = 0;
            for (size_t i = 0; i < n && n_tops < 64; i++)
                if (best_offsets[best_order[i]] + o->bufs[best_order[i]].size == best)
                    tops[n_tops++] = i;
            from = n_tops ? tops[g_rand_int_range(rng, 0, (gint32)n_tops)]
                          : (size_t)g_rand_int_range(rng, 0, (gint32)n);
        } else {
            from = (size_t)g_rand_int_range(rng, 0, (gint32)n);
        }
        if (from == 0)
            continue;
        size_t to = (size_t)g_rand_int_range(rng, 0, (gint32)from);
        size_t moved = order[from];
        memmove(order + to + 1, order + to, (from - to) * sizeof *order);
        order[to] = moved;
        uint64_t h = offline_place(&pl, order, best_fit_mode);
        if (h <= best) {
            best = h;
            memcpy(best_order, order, n * sizeof *order);
            memcpy(best_offsets, pl.offsets, n * sizeof *pl.offsets);
        }
    }
    g_rand_free(rng);
    for (size_t i = 0; i < n; i++) {
        o->bufs[i].offset = best_offsets[i];
        g_hash_table_insert(o->plan, &o->bufs[i].id, &o->bufs[i]);
    }
    o->height = n ? best : 0;
    o->planned = true;
    g_free(pl.placed);
    g_free(pl.offsets);
    g_free(order);
    g_free(best_order);
    g_free(best_offsets);
    return true;
}

static bool offline_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    offline *o = self;
    const offline_buf *b = g_hash_table_lookup(o->plan, &id);
    if (!b || b->size < size || b->offset > o->capacity || b->size > o->capacity - b->offset)
        return false;
    offline_live *l = g_new(offline_live, 1);
    *l = (offline_live){.id = id, .offset = b->offset, .size = b->size, .requested = size};
    g_hash_table_insert(o->live, &l->id, l);
    g_tree_insert(o->live_by_offset, GSIZE_TO_POINTER(b->offset), l);
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
    offline_live *l = g_hash_table_lookup(o->live, &id);
    if (!l)
        return;
    o->allocated -= l->requested;
    o->used_bytes -= l->size;
    g_tree_remove(o->live_by_offset, GSIZE_TO_POINTER(l->offset));
    g_hash_table_remove(o->live, &id);
}

typedef struct offline_gap_ctx {
    uint64_t cursor, largest;
} offline_gap_ctx;

static gboolean offline_gap_visit(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    const offline_live *l = value;
    offline_gap_ctx *ctx = data;
    if (l->offset > ctx->cursor && l->offset - ctx->cursor > ctx->largest)
        ctx->largest = l->offset - ctx->cursor;
    if (l->offset + l->size > ctx->cursor)
        ctx->cursor = l->offset + l->size;
    return FALSE;
}

static void offline_stats(const void *self, strata_alloc_stats *out)
{
    const offline *o = self;
    *out = (strata_alloc_stats){0};
    out->allocated = o->allocated;
    out->reserved = o->high_water;
    out->free_in_reserved = o->high_water - o->used_bytes;
    out->internal_waste = o->used_bytes - o->allocated;
    out->n_segments = 1;
    offline_gap_ctx ctx = {0, 0};
    g_tree_foreach(o->live_by_offset, offline_gap_visit, &ctx);
    if (o->high_water > ctx.cursor && o->high_water - ctx.cursor > ctx.largest)
        ctx.largest = o->high_water - ctx.cursor;
    out->largest_free = ctx.largest;
    out->planned_height = o->height;
    out->plan_lower_bound = o->lower_bound;
}

typedef struct offline_walk_ctx {
    strata_block_visit visit;
    void *user;
} offline_walk_ctx;

static gboolean offline_walk_visit(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    const offline_live *l = value;
    offline_walk_ctx *ctx = data;
    strata_block blk = {.offset = l->offset, .size = l->size, .state = STRATA_BLOCK_USED,
                        .id = l->id, .requested = l->requested};
    ctx->visit(&blk, ctx->user);
    return FALSE;
}

static void offline_walk(const void *self, strata_block_visit visit, void *user)
{
    const offline *o = self;
    offline_walk_ctx ctx = {visit, user};
    g_tree_foreach(o->live_by_offset, offline_walk_visit, &ctx);
}

const strata_alloc_type strata_alloc_offline = {
    .name = "offline",
    .summary = "offline planner: sees every lifetime first (greedy by size, several orderings, "
               "local search); reports its height against the lower bound",
    .params = offline_params,
    .create = offline_create,
    .destroy = offline_destroy,
    .alloc = offline_alloc,
    .free = offline_free,
    .release = NULL,
    .stats = offline_stats,
    .walk = offline_walk,
    .plan = offline_plan,
};
