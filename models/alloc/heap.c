/*
 * heap.c: the flat block heap shared by first-fit, next-fit and best-fit
 * (see heap.h for the design and its invariants).
 */
#include "alloc/heap.h"
#include <assert.h>
#include <stddef.h>
#include "core/error.h"

static strata_heap_block *block_of(strata_tnode *n)
{
    return n ? (strata_heap_block *)(void *)((char *)n - offsetof(strata_heap_block, node)) : NULL;
}

/* b's key in the index: (size, offset) or (offset, 0). */
static uint64_t key1(const strata_heap *h, const strata_heap_block *b)
{
    return h->index == STRATA_HEAP_BY_SIZE ? b->size : b->offset;
}

static uint64_t key2(const strata_heap *h, const strata_heap_block *b)
{
    return h->index == STRATA_HEAP_BY_SIZE ? b->offset : 0;
}

static void heap_index_add(strata_heap *h, strata_heap_block *b)
{
    b->node.k1 = key1(h, b);
    b->node.k2 = key2(h, b);
    b->node.value = b->size;
    strata_blocktree_insert(&h->free_blocks, &b->node);
}

/* Free block b changed its offset or size: its node follows. */
static void heap_index_moved(strata_heap *h, strata_heap_block *b)
{
    strata_blocktree_rekey(&h->free_blocks, &b->node, key1(h, b), key2(h, b), b->size);
}

static void heap_index_remove(strata_heap *h, strata_heap_block *b)
{
    strata_blocktree_remove(&h->free_blocks, &b->node);
}

#ifndef NDEBUG
/* Block b against its address neighbours (O(1)): invariants 1, 2 and 4
 * where they touch b. */
static bool heap_block_ok(const strata_heap *h, const strata_heap_block *b)
{
    uint64_t mask = h->alignment - 1;
    return b->size > 0 && (b->offset & mask) == 0 && (b->size & mask) == 0           /* invariant 4 */
        && (b->prev ? b->prev->next == b && b->prev->offset + b->prev->size == b->offset
                    : h->head == b && b->offset == 0)                                /* invariant 1 */
        && (b->next ? b->next->prev == b && b->offset + b->size == b->next->offset
                    : h->tail == b && b->offset + b->size == h->capacity)            /* invariant 1 */
        && (b->used || ((!b->prev || b->prev->used) && (!b->next || b->next->used))) /* invariant 2 */
        && (b->used || b->requested == 0);
}

/* The whole heap (O(n log n)): invariants 1 to 4, for destroy. */
static bool heap_ok(const strata_heap *h)
{
    uint64_t n_free = 0, used = 0, allocated = 0, n_used = 0;
    for (const strata_heap_block *b = h->head; b; b = b->next) {
        if (!heap_block_ok(h, b))
            return false;
        if (b->used) {
            if (strata_idmap_get(h->live, b->id) != b) /* invariant 3 */
                return false;
            n_used++;
            used += b->size;
            allocated += b->requested;
        } else {
            n_free++;
        }
    }
    return strata_blocktree_ok(&h->free_blocks) && h->free_blocks.count == n_free /* invariant 3 */
        && strata_idmap_size(h->live) == n_used                                  /* invariant 3 */
        && used == h->used_bytes && allocated == h->allocated;                   /* invariant 4 */
}
#endif

/* A zeroed block struct, recycled when one is spare. */
static strata_heap_block *block_new(strata_heap *h)
{
    strata_heap_block *b = h->spare;
    if (!b)
        return g_new0(strata_heap_block, 1);
    h->spare = b->next;
    *b = (strata_heap_block){0};
    return b;
}

static void block_recycle(strata_heap *h, strata_heap_block *b)
{
    b->next = h->spare;
    h->spare = b;
}

bool strata_heap_init(strata_heap *h, uint64_t capacity, uint64_t alignment, strata_heap_index index,
                      GError **err)
{
    if (alignment == 0)
        alignment = 256;
    if ((alignment & (alignment - 1)) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "alignment must be a power of two, got %" G_GUINT64_FORMAT, alignment);
        return false;
    }
    *h = (strata_heap){0};
    h->alignment = alignment;
    h->capacity = capacity & ~(alignment - 1);
    h->index = index;
    strata_blocktree_init(&h->free_blocks);
    h->live = strata_idmap_new();
    if (h->capacity > 0) {
        strata_heap_block *b = block_new(h);
        b->size = h->capacity;
        h->head = h->tail = b;
        heap_index_add(h, b);
    }
    return true;
}

static void free_chain(strata_heap_block *b)
{
    while (b) {
        strata_heap_block *next = b->next;
        g_free(b);
        b = next;
    }
}

void strata_heap_clear(strata_heap *h)
{
    assert(heap_ok(h)); /* invariants 1-4 */
    free_chain(h->head);
    free_chain(h->spare);
    strata_idmap_free(h->live);
    *h = (strata_heap){0};
}

uint64_t strata_heap_round(const strata_heap *h, uint64_t size)
{
    if (size == 0)
        return h->alignment;
    if (size > UINT64_MAX - (h->alignment - 1))
        return 0;
    return (size + h->alignment - 1) & ~(h->alignment - 1);
}

strata_heap_block *strata_heap_best(const strata_heap *h, uint64_t size)
{
    g_assert(h->index == STRATA_HEAP_BY_SIZE);
    return block_of(strata_blocktree_lower_bound(&h->free_blocks, size, 0));
}

strata_heap_block *strata_heap_first_from(const strata_heap *h, uint64_t from, uint64_t size)
{
    g_assert(h->index == STRATA_HEAP_BY_OFFSET);
    return block_of(strata_blocktree_fit_from(&h->free_blocks, from, size));
}

strata_heap_block *strata_heap_free_at(const strata_heap *h, uint64_t at)
{
    g_assert(h->index == STRATA_HEAP_BY_OFFSET);
    strata_heap_block *b = block_of(strata_blocktree_floor(&h->free_blocks, at, UINT64_MAX));
    return b && at - b->offset < b->size ? b : NULL;
}

strata_heap_block *strata_heap_take(strata_heap *h, strata_heap_block *b, uint64_t size, uint64_t id,
                                    uint64_t requested)
{
    g_assert(!b->used && b->size >= size);
    if (b->size > size) {
        /* The front becomes a new used block; b keeps the rest and, with
         * it, most often its place in the index. */
        strata_heap_block *used = block_new(h);
        used->offset = b->offset;
        used->size = size;
        used->prev = b->prev;
        used->next = b;
        if (b->prev)
            b->prev->next = used;
        else
            h->head = used;
        b->prev = used;
        b->offset += size;
        b->size -= size;
        heap_index_moved(h, b);
        b = used;
    } else {
        heap_index_remove(h, b);
    }
    b->used = true;
    b->id = id;
    b->requested = requested;
    strata_idmap_put(h->live, id, b);
    h->allocated += requested;
    h->used_bytes += b->size;
    assert(heap_block_ok(h, b));                        /* invariants 1, 2, 4 */
    assert(b->next == NULL || heap_block_ok(h, b->next)); /* the free rest */
    return b;
}

/* Absorb b->next (free, adjacent) into b. */
static void heap_absorb_next(strata_heap *h, strata_heap_block *b)
{
    strata_heap_block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    else
        h->tail = b;
    block_recycle(h, n);
}

bool strata_heap_free(strata_heap *h, uint64_t id)
{
    strata_heap_block *b = strata_idmap_take(h->live, id);
    if (!b)
        return false;
    h->allocated -= b->requested;
    h->used_bytes -= b->size;
    b->used = false;
    b->id = 0;
    b->requested = 0;
    if (b->next && !b->next->used) {
        heap_index_remove(h, b->next);
        heap_absorb_next(h, b);
    }
    if (b->prev && !b->prev->used) {
        strata_heap_block *p = b->prev;
        heap_absorb_next(h, p); /* p grows in place: it keeps its node */
        heap_index_moved(h, p);
        assert(heap_block_ok(h, p)); /* invariants 1, 2, 4: coalesced */
        return true;
    }
    heap_index_add(h, b);
    assert(heap_block_ok(h, b)); /* invariants 1, 2, 4: coalesced */
    return true;
}

/* Largest free block but the free tail (when the tail is free). The tail
 * is the last node of either index when it is the largest block (the last
 * by size) or free at all (the last by offset). */
static uint64_t heap_largest_free(const strata_heap *h, const strata_heap_block *tail_free)
{
    const strata_blocktree *t = &h->free_blocks;
    if (tail_free && strata_blocktree_last(t) == &tail_free->node)
        return strata_blocktree_max_but_last(t);
    return t->root ? t->root->max : 0;
}

void strata_heap_stats(const strata_heap *h, strata_alloc_stats *out)
{
    *out = (strata_alloc_stats){0};
    out->allocated = h->allocated;
    out->internal_waste = h->used_bytes - h->allocated;
    out->n_segments = 1;
    /* The span of used blocks: everything but a free tail. */
    const strata_heap_block *tail_free = (h->tail && !h->tail->used) ? h->tail : NULL;
    out->reserved = tail_free ? tail_free->offset : h->capacity;
    out->free_in_reserved = out->reserved - h->used_bytes;
    /* Largest free block below the span: the largest free block unless it is the tail. */
    out->largest_free = heap_largest_free(h, tail_free);
}

void strata_heap_walk(const strata_heap *h, strata_block_visit visit, void *user)
{
    for (const strata_heap_block *b = h->head; b; b = b->next) {
        strata_block_visit_fields(visit, user, b->offset, b->size, b->used, b->id, b->requested, 0);
    }
}
