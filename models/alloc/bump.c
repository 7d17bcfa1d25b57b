/*
 * bump.c: the bump (arena) allocator, which never reuses memory.
 *
 * Design: a pointer that only moves up; a free marks its block dead but the
 * bytes are never handed out again. Its peak reserved bytes are the sum of
 * every allocation, the upper bound any reusing allocator is compared with.
 *
 * Invariants: blocks are laid out back to back from 0 in allocation order;
 * top = end of the last block <= capacity; reserved = top; a freed block is
 * reported free but is never counted as usable (largest_free = 0).
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "core/error.h"

typedef struct bump_block {
    uint64_t offset, size, id, requested;
    bool live;
} bump_block;

typedef struct bump {
    uint64_t capacity, alignment, top;
    GArray *blocks;     /* bump_block, in address order */
    GHashTable *by_id;  /* id -> index + 1 into blocks */
    uint64_t allocated, used_bytes;
} bump;

static const strata_param_def bump_params[] = {
    {NULL, 0, NULL, NULL, NULL},
};

#ifndef NDEBUG
/* Back to back from 0, top = end of the last, within capacity (O(n)):
 * for destroy. */
static bool bump_ok(const bump *b)
{
    uint64_t at = 0, used = 0, allocated = 0, live = 0;
    for (guint i = 0; i < b->blocks->len; i++) {
        const bump_block *blk = &g_array_index(b->blocks, bump_block, i);
        if (blk->offset != at)
            return false;
        at += blk->size;
        if (blk->live) {
            live++;
            used += blk->size;
            allocated += blk->requested;
        }
    }
    return at == b->top && b->top <= b->capacity && used == b->used_bytes && allocated == b->allocated
        && live == g_hash_table_size(b->by_id);
}
#endif

static void *bump_create(const strata_alloc_config *cfg, GError **err)
{
    (void)err;
    bump *b = g_new0(bump, 1);
    b->alignment = cfg->alignment ? cfg->alignment : 256;
    b->capacity = cfg->capacity & ~(b->alignment - 1);
    b->blocks = g_array_new(FALSE, FALSE, sizeof(bump_block));
    b->by_id = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    return b;
}

static void bump_destroy(void *self)
{
    bump *b = self;
    assert(bump_ok(b)); /* back to back from 0; top = end of the last <= capacity */
    g_array_free(b->blocks, TRUE);
    g_hash_table_destroy(b->by_id);
    g_free(b);
}

static bool bump_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    bump *b = self;
    uint64_t rounded = size == 0 ? b->alignment : (size + b->alignment - 1) & ~(b->alignment - 1);
    if (rounded < size || rounded > b->capacity - b->top)
        return false;
    bump_block blk = {.offset = b->top, .size = rounded, .id = id, .requested = size, .live = true};
    g_array_append_val(b->blocks, blk);
    uint64_t *key = g_new(uint64_t, 1);
    *key = id;
    g_hash_table_insert(b->by_id, key, GSIZE_TO_POINTER((gsize)b->blocks->len));
    b->top += rounded;
    b->allocated += size;
    b->used_bytes += rounded;
    assert(b->top == blk.offset + blk.size && b->top <= b->capacity); /* top = end of the last <= capacity */
    *offset = blk.offset;
    return true;
}

static void bump_free(void *self, uint64_t id)
{
    bump *b = self;
    gsize index = GPOINTER_TO_SIZE(g_hash_table_lookup(b->by_id, &id));
    if (index == 0)
        return;
    g_hash_table_remove(b->by_id, &id);
    bump_block *blk = &g_array_index(b->blocks, bump_block, index - 1);
    blk->live = false;
    b->allocated -= blk->requested;
    b->used_bytes -= blk->size;
}

static void bump_stats(const void *self, strata_alloc_stats *out)
{
    const bump *b = self;
    *out = (strata_alloc_stats){0};
    out->allocated = b->allocated;
    out->reserved = b->top;
    out->free_in_reserved = b->top - b->used_bytes;
    out->largest_free = 0; /* dead blocks are never reused */
    out->internal_waste = b->used_bytes - b->allocated;
    out->n_segments = 1;
}

static void bump_walk(const void *self, strata_block_visit visit, void *user)
{
    const bump *b = self;
    for (guint i = 0; i < b->blocks->len; i++) {
        const bump_block *blk = &g_array_index(b->blocks, bump_block, i);
        strata_block out = {
            .offset = blk->offset,
            .size = blk->size,
            .state = blk->live ? STRATA_BLOCK_USED : STRATA_BLOCK_FREE,
            .id = blk->live ? blk->id : 0,
            .requested = blk->live ? blk->requested : 0,
        };
        visit(&out, user);
    }
}

const strata_alloc_type strata_alloc_bump = {
    .name = "bump",
    .summary = "never reuses memory: the upper bound",
    .params = bump_params,
    .create = bump_create,
    .destroy = bump_destroy,
    .alloc = bump_alloc,
    .free = bump_free,
    .release = NULL,
    .stats = bump_stats,
    .walk = bump_walk,
    .plan = NULL,
};
