/*
 * best_fit.c: the best-fit allocator over a flat heap.
 *
 * Design: the classic best-fit of Knuth (TAOCP 2.5) with immediate
 * coalescing. Free blocks are kept in a balanced tree ordered by (size,
 * offset) (heap.h, blocktree.h), so the smallest block that fits, lowest address among
 * equals, is found in O(log n); frees coalesce with both address neighbours
 * in O(1) through the address-ordered block list, then re-index in O(log n).
 *
 * Invariants: those of heap.h; a request takes the smallest free block that
 * holds its size rounded up to the alignment, and the remainder stays free.
 */
#include "alloc/alloc.h"
#include "alloc/heap.h"

static const strata_param_def best_fit_params[] = {
    {NULL, 0, NULL, NULL, NULL},
};

static void *best_fit_create(const strata_alloc_config *cfg, GError **err)
{
    strata_heap *h = g_new0(strata_heap, 1);
    if (!strata_heap_init(h, cfg->capacity, cfg->alignment, STRATA_HEAP_BY_SIZE, err)) {
        g_free(h);
        return NULL;
    }
    return h;
}

static void best_fit_destroy(void *self)
{
    strata_heap_clear(self);
    g_free(self);
}

static bool best_fit_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    strata_heap *h = self;
    uint64_t rounded = strata_heap_round(h, size);
    if (rounded == 0)
        return false;
    strata_heap_block *b = strata_heap_best(h, rounded);
    if (!b)
        return false;
    b = strata_heap_take(h, b, rounded, id, size);
    *offset = b->offset;
    return true;
}

static void best_fit_free(void *self, uint64_t id)
{
    strata_heap_free(self, id);
}

static void best_fit_stats(const void *self, strata_alloc_stats *out)
{
    strata_heap_stats(self, out);
}

static void best_fit_walk(const void *self, strata_block_visit visit, void *user)
{
    strata_heap_walk(self, visit, user);
}

const strata_alloc_type strata_alloc_best_fit = {
    .name = "best-fit",
    .summary = "smallest free block that fits (size-ordered tree, O(log n)), coalescing",
    .params = best_fit_params,
    .create = best_fit_create,
    .destroy = best_fit_destroy,
    .alloc = best_fit_alloc,
    .free = best_fit_free,
    .release = NULL,
    .stats = best_fit_stats,
    .walk = best_fit_walk,
    .plan = NULL,
};
