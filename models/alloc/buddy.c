/*
 * buddy.c: the binary buddy allocator (Knowlton 1965; Knuth TAOCP 2.5, the
 * "buddy system"), power-of-two blocks split on demand and merged on free.
 *
 * Design: the capacity is cut into top blocks, one per set bit of
 * capacity / min_block, largest first (a 12 GiB memory is an 8 GiB and a
 * 4 GiB top block). Order k holds blocks of min_block << k bytes. A request
 * is rounded up to the next power of two (at least min_block); the lowest
 * addressed free block of the smallest order that is large enough is split
 * in halves until it has the right order. A freed block merges with its
 * buddy (offset XOR size, within its top block) while the buddy is free.
 *
 * Invariants: every block is aligned to its own size relative to its top
 * block; the free blocks of each order are kept in an offset-ordered tree;
 * no free block has a free buddy of the same order (merging is eager);
 * used and free blocks tile the top blocks, that is [0, capacity rounded
 * down to min_block). Reserved is the span up to the
 * end of the highest used block (3 MiB alone reserves 4 MiB).
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "core/error.h"

#define BUDDY_MAX_ORDERS 64

typedef struct buddy_top {
    uint64_t base, size;
} buddy_top;

typedef struct buddy_used {
    uint64_t id, offset, requested;
    unsigned order;
} buddy_used;

typedef struct buddy {
    uint64_t capacity, min_block;
    buddy_top tops[BUDDY_MAX_ORDERS];
    unsigned n_tops;
    GTree *free[BUDDY_MAX_ORDERS]; /* offsets (as pointers) by order */
    GHashTable *used;              /* &buddy_used.id -> buddy_used */
    GTree *used_by_offset;         /* offset -> buddy_used */
    uint64_t allocated, used_bytes;
} buddy;

static const strata_param_def buddy_params[] = {
    {"min_block", STRATA_PARAM_SIZE, "256",
     "smallest block (a power of two; at least the memory's alignment)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static void *buddy_create(const strata_alloc_config *cfg, GError **err)
{
    uint64_t min_block = strata_params_size(cfg->params, "min_block");
    if (min_block == 0 || (min_block & (min_block - 1)) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "min_block must be a power of two, got %" G_GUINT64_FORMAT, min_block);
        return NULL;
    }
    if (cfg->alignment > min_block)
        min_block = cfg->alignment;
    buddy *b = g_new0(buddy, 1);
    b->min_block = min_block;
    b->capacity = cfg->capacity;
    for (unsigned k = 0; k < BUDDY_MAX_ORDERS; k++)
        b->free[k] = g_tree_new_full(strata_alloc_cmp_offset, NULL, NULL, NULL);
    b->used = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    b->used_by_offset = g_tree_new_full(strata_alloc_cmp_offset, NULL, NULL, NULL);
    uint64_t units = cfg->capacity / min_block, base = 0;
    for (int k = BUDDY_MAX_ORDERS - 1; k >= 0; k--) {
        if (!((units >> k) & 1))
            continue;
        uint64_t size = min_block << k;
        b->tops[b->n_tops++] = (buddy_top){base, size};
        g_tree_insert(b->free[k], GSIZE_TO_POINTER(base), GSIZE_TO_POINTER(base));
        base += size;
    }
    return b;
}

#ifndef NDEBUG
static bool buddy_ok(const buddy *b);
#endif

static void buddy_destroy(void *self)
{
    buddy *b = self;
    assert(buddy_ok(b)); /* aligned, merged, tiling the tops */
    for (unsigned k = 0; k < BUDDY_MAX_ORDERS; k++)
        g_tree_destroy(b->free[k]);
    g_tree_destroy(b->used_by_offset);
    g_hash_table_destroy(b->used);
    g_free(b);
}

static const buddy_top *buddy_top_of(const buddy *b, uint64_t offset);

#ifndef NDEBUG
/* A block of order k at offset at lies in a top block, aligned to its size
 * within it (O(1): at most 64 tops). */
static bool buddy_aligned(const buddy *b, uint64_t at, unsigned k)
{
    const buddy_top *top = buddy_top_of(b, at);
    uint64_t size = b->min_block << k;
    return top && size <= top->size && (at - top->base) % size == 0 && top->size - (at - top->base) >= size;
}

/* Free block (at, k) has no free buddy of order k (O(log n)). */
static bool buddy_merged(const buddy *b, uint64_t at, unsigned k)
{
    const buddy_top *top = buddy_top_of(b, at);
    uint64_t size = b->min_block << k;
    if (size >= top->size)
        return true;
    uint64_t mate = top->base + ((at - top->base) ^ size);
    return g_tree_lookup_extended(b->free[k], GSIZE_TO_POINTER(mate), NULL, NULL) == FALSE;
}

typedef struct buddy_check {
    const buddy *b;
    unsigned order;
    bool ok;
    uint64_t bytes;
} buddy_check;

static gboolean buddy_check_free(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    buddy_check *c = data;
    uint64_t at = GPOINTER_TO_SIZE(key);
    c->ok = c->ok && buddy_aligned(c->b, at, c->order) && buddy_merged(c->b, at, c->order);
    c->bytes += c->b->min_block << c->order;
    return !c->ok;
}

static gboolean buddy_check_used(gpointer key, gpointer value, gpointer data)
{
    buddy_check *c = data;
    const buddy_used *u = value;
    c->ok = c->ok && GPOINTER_TO_SIZE(key) == u->offset && buddy_aligned(c->b, u->offset, u->order)
         && g_hash_table_lookup(c->b->used, &u->id) == u;
    c->bytes += c->b->min_block << u->order;
    return !c->ok;
}

/* Every block (O(n log n)): aligned, merged, and, the generic checker
 * having shown they never overlap, together as large as the tops: they
 * tile them. For destroy. */
static bool buddy_ok(const buddy *b)
{
    buddy_check c = {.b = b, .ok = true};
    g_tree_foreach(b->used_by_offset, buddy_check_used, &c);
    uint64_t used = c.bytes;
    for (unsigned k = 0; c.ok && k < BUDDY_MAX_ORDERS; k++) {
        c.order = k;
        g_tree_foreach(b->free[k], buddy_check_free, &c);
    }
    uint64_t tops = 0;
    for (unsigned i = 0; i < b->n_tops; i++)
        tops += b->tops[i].size;
    return c.ok && c.bytes == tops && used == b->used_bytes
        && (guint)g_tree_nnodes(b->used_by_offset) == g_hash_table_size(b->used);
}
#endif

static bool buddy_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    buddy *b = self;
    unsigned order = 0;
    while ((b->min_block << order) < size) {
        if (order + 1 >= BUDDY_MAX_ORDERS || (b->min_block << order) >= (UINT64_C(1) << 63))
            return false;
        order++;
    }
    unsigned k = order;
    while (k < BUDDY_MAX_ORDERS && g_tree_nnodes(b->free[k]) == 0)
        k++;
    if (k == BUDDY_MAX_ORDERS)
        return false;
    GTreeNode *n = g_tree_node_first(b->free[k]);
    uint64_t at = GPOINTER_TO_SIZE(g_tree_node_key(n));
    g_tree_remove(b->free[k], GSIZE_TO_POINTER(at));
    while (k > order) {
        k--;
        uint64_t half = at + (b->min_block << k);
        g_tree_insert(b->free[k], GSIZE_TO_POINTER(half), GSIZE_TO_POINTER(half));
    }
    buddy_used *u = g_new(buddy_used, 1);
    *u = (buddy_used){.id = id, .offset = at, .requested = size, .order = order};
    g_hash_table_insert(b->used, &u->id, u);
    g_tree_insert(b->used_by_offset, GSIZE_TO_POINTER(at), u);
    b->allocated += size;
    b->used_bytes += b->min_block << order;
    assert(buddy_aligned(b, at, order)); /* aligned to its size in its top */
    *offset = at;
    return true;
}

static const buddy_top *buddy_top_of(const buddy *b, uint64_t offset)
{
    for (unsigned i = 0; i < b->n_tops; i++)
        if (offset >= b->tops[i].base && offset - b->tops[i].base < b->tops[i].size)
            return &b->tops[i];
    return NULL;
}

static void buddy_free(void *self, uint64_t id)
{
    buddy *b = self;
    buddy_used *u = g_hash_table_lookup(b->used, &id);
    if (!u)
        return;
    uint64_t at = u->offset;
    unsigned k = u->order;
    b->allocated -= u->requested;
    b->used_bytes -= b->min_block << k;
    g_tree_remove(b->used_by_offset, GSIZE_TO_POINTER(at));
    g_hash_table_remove(b->used, &id); /* frees u */
    const buddy_top *top = buddy_top_of(b, at);
    while ((b->min_block << k) < top->size) {
        uint64_t mate = top->base + ((at - top->base) ^ (b->min_block << k));
        if (!g_tree_remove(b->free[k], GSIZE_TO_POINTER(mate)))
            break;
        if (mate < at)
            at = mate;
        k++;
    }
    g_tree_insert(b->free[k], GSIZE_TO_POINTER(at), GSIZE_TO_POINTER(at));
    assert(buddy_aligned(b, at, k) && buddy_merged(b, at, k)); /* merging is eager */
}

static uint64_t buddy_span(const buddy *b)
{
    GTreeNode *last = g_tree_node_last(b->used_by_offset);
    if (!last)
        return 0;
    const buddy_used *u = g_tree_node_value(last);
    return u->offset + (b->min_block << u->order);
}

static void buddy_stats(const void *self, strata_alloc_stats *out)
{
    const buddy *b = self;
    *out = (strata_alloc_stats){0};
    out->allocated = b->allocated;
    out->reserved = buddy_span(b);
    out->free_in_reserved = out->reserved - b->used_bytes;
    out->internal_waste = b->used_bytes - b->allocated;
    out->n_segments = b->n_tops;
    for (int k = BUDDY_MAX_ORDERS - 1; k >= 0; k--) {
        GTreeNode *n = g_tree_node_first(b->free[k]);
        if (n && GPOINTER_TO_SIZE(g_tree_node_key(n)) + (b->min_block << k) <= out->reserved) {
            out->largest_free = b->min_block << k;
            break;
        }
    }
}

typedef struct buddy_walk_ctx {
    const buddy *b;
    unsigned order;
    strata_block_visit visit;
    void *user;
} buddy_walk_ctx;

static gboolean buddy_walk_free(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    buddy_walk_ctx *ctx = data;
    strata_block blk = {.offset = GPOINTER_TO_SIZE(key), .size = ctx->b->min_block << ctx->order,
                        .state = STRATA_BLOCK_FREE};
    ctx->visit(&blk, ctx->user);
    return FALSE;
}

static gboolean buddy_walk_used(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    buddy_walk_ctx *ctx = data;
    const buddy_used *u = value;
    strata_block blk = {.offset = u->offset, .size = ctx->b->min_block << u->order,
                        .state = STRATA_BLOCK_USED, .id = u->id, .requested = u->requested};
    ctx->visit(&blk, ctx->user);
    return FALSE;
}

static void buddy_walk(const void *self, strata_block_visit visit, void *user)
{
    const buddy *b = self;
    buddy_walk_ctx ctx = {.b = b, .visit = visit, .user = user};
    g_tree_foreach(b->used_by_offset, buddy_walk_used, &ctx);
    for (unsigned k = 0; k < BUDDY_MAX_ORDERS; k++) {
        ctx.order = k;
        g_tree_foreach(b->free[k], buddy_walk_free, &ctx);
    }
}

const strata_alloc_type strata_alloc_buddy = {
    .name = "buddy",
    .summary = "binary buddy system: power-of-two blocks, split on demand, merged with their buddy",
    .params = buddy_params,
    .create = buddy_create,
    .destroy = buddy_destroy,
    .alloc = buddy_alloc,
    .free = buddy_free,
    .release = NULL,
    .stats = buddy_stats,
    .walk = buddy_walk,
    .plan = NULL,
};
