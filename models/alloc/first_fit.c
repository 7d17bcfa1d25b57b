/*
 * first_fit.c: the first-fit allocator over a flat heap.
 *
 * Design: Knuth's first-fit (TAOCP 2.5, algorithm A) with immediate
 * coalescing: a request takes the lowest-addressed free block that holds it.
 * Free blocks are kept in a tree ordered by offset whose every subtree knows
 * its largest block (heap.h, blocktree.h), so the search descends to the
 * lowest fit in O(log n) instead of walking the free list; frees coalesce
 * in O(log n).
 *
 * Invariants: those of heap.h; no free block below the chosen one could hold
 * the (aligned) request.
 */
#include "alloc/alloc.h"
#include "alloc/heap.h"

static const strata_param_def first_fit_params[] = {
    {NULL, 0, NULL, NULL, NULL},
};

static void *first_fit_create(const strata_alloc_config *cfg, GError **err)
{
    strata_heap *h = g_new0(strata_heap, 1);
    if (!strata_heap_init(h, cfg->capacity, cfg->alignment, STRATA_HEAP_BY_OFFSET, err)) {
        g_free(h);
        return NULL;
    }
    return h;
}

static void first_fit_destroy(void *self)
{
    strata_heap_clear(self);
    g_free(self);
}

static bool first_fit_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream,
                            uint64_t *offset)
{
    (void)stream;
    strata_heap *h = self;
    uint64_t rounded = strata_heap_round(h, size);
    if (rounded == 0)
        return false;
    strata_heap_block *b = strata_heap_first_from(h, 0, rounded);
    if (!b)
        return false;
    b = strata_heap_take(h, b, rounded, id, size);
    *offset = b->offset;
    return true;
}

static void first_fit_free(void *self, uint64_t id)
{
    strata_heap_free(self, id);
}

static void first_fit_stats(const void *self, strata_alloc_stats *out)
{
    strata_heap_stats(self, out);
}

static void first_fit_walk(const void *self, strata_block_visit visit, void *user)
{
    strata_heap_walk(self, visit, user);
}

const strata_alloc_type strata_alloc_first_fit = {
    .name = "first-fit",
    .summary = "lowest-addressed free block that fits (offset-ordered tree, O(log n)), coalescing",
    .params = first_fit_params,
    .create = first_fit_create,
    .destroy = first_fit_destroy,
    .alloc = first_fit_alloc,
    .free = first_fit_free,
    .release = NULL,
    .stats = first_fit_stats,
    .walk = first_fit_walk,
    .plan = NULL,
};
