/*
 * blockset.c: whole cached blocks placed in an address space (blockset.h).
 */
#include "alloc/blockset.h"
#include <assert.h>

void strata_blockset_init(strata_blockset *s, uint64_t capacity, uint64_t granule)
{
    *s = (strata_blockset){0};
    s->capacity = capacity;
    s->granule = granule;
    s->by_offset = g_tree_new_full(strata_alloc_cmp_offset, NULL, NULL, g_free);
    s->live = g_hash_table_new(g_int64_hash, g_int64_equal);
}

#ifndef NDEBUG
/* Block b against the blocks beside it by address (O(log n)): never
 * overlapping. */
static bool blockset_block_ok(const strata_blockset *s, const strata_wblock *b)
{
    GTreeNode *n = g_tree_lookup_node(s->by_offset, GSIZE_TO_POINTER((gsize)b->offset));
    if (n == NULL || g_tree_node_value(n) != b || b->size == 0)
        return false;
    GTreeNode *before = g_tree_node_previous(n), *after = g_tree_node_next(n);
    const strata_wblock *p = before ? g_tree_node_value(before) : NULL;
    const strata_wblock *q = after ? g_tree_node_value(after) : NULL;
    return (!p || p->offset + p->size <= b->offset) && (!q || b->offset + b->size <= q->offset);
}

typedef struct blockset_sums {
    const strata_blockset *s;
    uint64_t reserved, used, allocated, n_live, end;
    bool ok;
} blockset_sums;

static gboolean blockset_check_visit(gpointer key, gpointer value, gpointer user)
{
    const strata_wblock *b = value;
    blockset_sums *c = user;
    c->ok = c->ok && GPOINTER_TO_SIZE(key) == b->offset && b->size > 0 && b->offset >= c->end
         && (!b->live || g_hash_table_lookup(c->s->live, &b->id) == b);
    c->end = b->offset + b->size;
    c->reserved += b->size;
    if (b->live) {
        c->n_live++;
        c->used += b->size;
        c->allocated += b->requested;
    }
    return !c->ok;
}

/* Every invariant over every block (O(n)): for clear. */
static bool blockset_ok(const strata_blockset *s)
{
    blockset_sums c = {.s = s, .ok = true};
    g_tree_foreach(s->by_offset, blockset_check_visit, &c);
    return c.ok && c.reserved == s->reserved && s->reserved <= s->capacity && c.used == s->used_bytes
        && c.allocated == s->allocated && c.n_live == g_hash_table_size(s->live);
}
#endif

void strata_blockset_clear(strata_blockset *s)
{
    assert(blockset_ok(s)); /* no overlap; reserved = sum <= capacity; the sums; live indexed */
    g_hash_table_destroy(s->live);
    g_tree_destroy(s->by_offset);
}

typedef struct place_ctx {
    uint64_t size, align, at;
    bool found;
} place_ctx;

static uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) & ~(align - 1);
}

/* Visits blocks by address, moving `at` past each until a gap holds size. */
static gboolean place_visit(gpointer key, gpointer value, gpointer user)
{
    (void)key;
    const strata_wblock *b = value;
    place_ctx *p = user;
    if (b->offset >= p->at && b->offset - p->at >= p->size) {
        p->found = true;
        return TRUE;
    }
    p->at = round_up(b->offset + b->size, p->align);
    return FALSE;
}

strata_wblock *strata_blockset_add(strata_blockset *s, uint64_t size)
{
    if (size == 0 || size > s->capacity - s->reserved)
        return NULL;
    place_ctx p = {.size = size, .align = size < s->granule ? size : s->granule};
    g_tree_foreach(s->by_offset, place_visit, &p);
    strata_wblock *b = g_new0(strata_wblock, 1);
    b->offset = p.at;
    b->size = size;
    b->number = s->next_number++;
    g_tree_insert(s->by_offset, GSIZE_TO_POINTER((gsize)b->offset), b);
    s->reserved += size;
    assert(blockset_block_ok(s, b)); /* blocks never overlap */
    assert(s->reserved <= s->capacity); /* reserved <= capacity */
    return b;
}

void strata_blockset_drop(strata_blockset *s, strata_wblock *b)
{
    s->reserved -= b->size;
    g_tree_remove(s->by_offset, GSIZE_TO_POINTER((gsize)b->offset));
}

void strata_blockset_use(strata_blockset *s, strata_wblock *b, uint64_t id, uint64_t requested,
                         uint32_t stream)
{
    assert(!b->live); /* a cached block: not in live */
    b->live = true;
    b->id = id;
    b->requested = requested;
    b->stream = stream;
    g_hash_table_insert(s->live, &b->id, b);
    s->allocated += requested;
    s->used_bytes += b->size;
}

strata_wblock *strata_blockset_unuse(strata_blockset *s, uint64_t id)
{
    strata_wblock *b = g_hash_table_lookup(s->live, &id);
    if (b == NULL)
        return NULL;
    g_hash_table_remove(s->live, &id);
    s->allocated -= b->requested;
    s->used_bytes -= b->size;
    b->live = false;
    b->id = 0;
    b->requested = 0;
    return b;
}

void strata_blockset_stats(const strata_blockset *s, uint64_t largest_free, strata_alloc_stats *out)
{
    *out = (strata_alloc_stats){0};
    out->allocated = s->allocated;
    out->reserved = s->reserved;
    out->free_in_reserved = s->reserved - s->used_bytes;
    out->internal_waste = s->used_bytes - s->allocated;
    out->largest_free = largest_free;
    out->n_segments = (uint64_t)g_tree_nnodes(s->by_offset);
    GTreeNode *last = g_tree_node_last(s->by_offset);
    if (last) {
        const strata_wblock *b = g_tree_node_value(last);
        out->address_space = b->offset + b->size;
    }
}

static gboolean walk_visit(gpointer key, gpointer value, gpointer user)
{
    (void)key;
    const strata_wblock *b = value;
    const strata_block_walk *w = user;
    strata_block_visit_fields(w->visit, w->user, b->offset, b->size, b->live, b->id, b->requested, b->number);
    return FALSE;
}

void strata_blockset_walk(const strata_blockset *s, strata_block_visit visit, void *user)
{
    strata_block_walk w = {visit, user};
    g_tree_foreach(s->by_offset, walk_visit, &w);
}
