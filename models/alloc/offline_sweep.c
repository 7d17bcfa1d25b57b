/*
 * offline_sweep.c: the offline planner's placement in O(n log n) (see
 * offline.h), for problems too large for the general placement pass.
 *
 * It places the buffers in order of start (then larger first, then by
 * index), sweeping time: before a buffer is placed, every buffer that ended
 * at or before its start is freed. The placed buffers overlapping a new one
 * are then exactly the live ones, so the gaps the general pass would find
 * by scanning them are the free intervals below the top of the live blocks,
 * kept in two trees: by offset (to merge a freed block with its
 * neighbours) and by (size, offset) (best fit: the smallest gap that holds
 * the buffer, the lowest among equals; else the top). It gives the plan the
 * general pass gives for the start order, best fit.
 *
 * Invariants: the gaps are disjoint, maximal (no two touch), lie below
 * `top` (none reaches it: it would have lowered the top), and together with
 * the live blocks tile [0, top). Debug builds assert the first three at
 * each gap made and over all gaps at the end of the pass.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/offline.h"

typedef struct sweep_gap {
    uint64_t off, size;
} sweep_gap;

typedef struct sweep {
    GTree *by_off;  /* sweep_gap* -> itself, by offset */
    GTree *by_size; /* sweep_gap* -> itself, by (size, offset) */
    uint64_t top;   /* the highest end of a live block; 0 when none */
} sweep;

static gint sweep_cmp_off(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const sweep_gap *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static gint sweep_cmp_size(gconstpointer a, gconstpointer b, gpointer user)
{
    const sweep_gap *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return sweep_cmp_off(a, b, user);
}

static sweep_gap *sweep_add(sweep *s, uint64_t off, uint64_t size)
{
    sweep_gap *g = g_new(sweep_gap, 1);
    *g = (sweep_gap){off, size};
    g_tree_insert(s->by_off, g, g);
    g_tree_insert(s->by_size, g, g);
    return g;
}

static void sweep_remove(sweep *s, sweep_gap *g)
{
    g_tree_remove(s->by_off, g);
    g_tree_remove(s->by_size, g);
    g_free(g);
}

#ifndef NDEBUG
/* Gap g against the gaps beside it by offset and the top (O(log n)):
 * disjoint, not touching, below the top. */
static bool sweep_gap_ok(const sweep *s, const sweep_gap *g)
{
    GTreeNode *n = g_tree_lookup_node(s->by_off, g);
    if (!n || g->size == 0 || g->off + g->size >= s->top || g_tree_lookup(s->by_size, g) != g)
        return false; /* a gap reaching the top would have lowered it */
    GTreeNode *before = g_tree_node_previous(n), *after = g_tree_node_next(n);
    const sweep_gap *p = before ? g_tree_node_key(before) : NULL, *q = after ? g_tree_node_key(after) : NULL;
    return (!p || p->off + p->size < g->off) && (!q || g->off + g->size < q->off);
}

typedef struct sweep_check {
    const sweep *s;
    bool ok;
} sweep_check;

static gboolean sweep_check_visit(gpointer key, gpointer value, gpointer user)
{
    (void)value;
    sweep_check *c = user;
    c->ok = c->ok && sweep_gap_ok(c->s, key);
    return !c->ok;
}

/* Every gap (O(n log n)): for the end of the pass. */
static bool sweep_ok(const sweep *s)
{
    sweep_check c = {s, true};
    g_tree_foreach(s->by_off, sweep_check_visit, &c);
    return c.ok && g_tree_nnodes(s->by_off) == g_tree_nnodes(s->by_size);
}
#endif

/* The offset of a block of `size`: the best-fitting gap, else the top. */
static uint64_t sweep_take(sweep *s, uint64_t size)
{
    sweep_gap key = {0, size};
    GTreeNode *node = g_tree_lower_bound(s->by_size, &key);
    if (!node) {
        uint64_t off = s->top;
        s->top += size;
        return off;
    }
    sweep_gap *g = g_tree_node_key(node);
    uint64_t off = g->off, rest = g->size - size;
    sweep_remove(s, g);
    if (rest) {
        const sweep_gap *left = sweep_add(s, off + size, rest);
        assert(sweep_gap_ok(s, left)); /* disjoint, maximal, below top */
        (void)left;
    }
    return off;
}

/* Frees [off, off + size): merged with the gaps it touches, or lowering the
 * top when nothing live lies above it. */
static void sweep_give(sweep *s, uint64_t off, uint64_t size)
{
    uint64_t lo = off, hi = off + size;
    sweep_gap key = {off, 0};
    GTreeNode *after = g_tree_lower_bound(s->by_off, &key);
    GTreeNode *before = after ? g_tree_node_previous(after) : g_tree_node_last(s->by_off);
    if (before) {
        sweep_gap *g = g_tree_node_key(before);
        if (g->off + g->size == lo) {
            lo = g->off;
            sweep_remove(s, g);
        }
    }
    if (after) {
        sweep_gap *g = g_tree_node_key(after);
        if (g->off == hi) {
            hi = g->off + g->size;
            sweep_remove(s, g);
        }
    }
    if (hi == s->top) {
        s->top = lo;
    } else {
        const sweep_gap *g = sweep_add(s, lo, hi - lo);
        assert(sweep_gap_ok(s, g)); /* disjoint, maximal, below top */
        (void)g;
    }
}


static int sweep_cmp_end(const void *a, const void *b, void *user)
{
    const offline_buf *bufs = user;
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (bufs[x].end != bufs[y].end)
        return bufs[x].end < bufs[y].end ? -1 : 1;
    return x < y ? -1 : x > y;
}

uint64_t offline_sweep(const offline_buf *bufs, size_t n, size_t *order, uint64_t *offsets)
{
    offline_key *keys = g_new0(offline_key, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        keys[i] = (offline_key){UINT64_MAX - bufs[i].start, bufs[i].size, 0, i};
    qsort(keys, n, sizeof *keys, offline_cmp_key);
    size_t *by_end = g_new(size_t, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        order[i] = keys[i].index;
        by_end[i] = i;
    }
    g_free(keys);
    g_qsort_with_data(by_end, (gint)n, sizeof *by_end, sweep_cmp_end, (gpointer)bufs);
    sweep s = {g_tree_new_full(sweep_cmp_off, NULL, NULL, NULL),
               g_tree_new_full(sweep_cmp_size, NULL, NULL, NULL), 0};
    uint64_t height = 0;
    size_t ended = 0;
    for (size_t k = 0; k < n; k++) {
        const offline_buf *b = &bufs[order[k]];
        for (; ended < n && bufs[by_end[ended]].end <= b->start; ended++)
            sweep_give(&s, offsets[by_end[ended]], bufs[by_end[ended]].size);
        offsets[order[k]] = sweep_take(&s, b->size);
        if (offsets[order[k]] + b->size > height)
            height = offsets[order[k]] + b->size;
    }
    assert(sweep_ok(&s)); /* every gap disjoint, maximal, below top */
    /* the gaps left are owned by by_off's keys */
    GTreeNode *node = g_tree_node_first(s.by_off);
    while (node) {
        GTreeNode *next = g_tree_node_next(node);
        g_free(g_tree_node_key(node));
        node = next;
    }
    g_tree_destroy(s.by_off);
    g_tree_destroy(s.by_size);
    g_free(by_end);
    return height;
}
