/*
 * next_fit.c: the next-fit allocator over a flat heap.
 *
 * Design: Knuth's next-fit (TAOCP 2.5, exercise 6), the "roving pointer"
 * variant of first-fit: the search for a free block starts where the last
 * allocation ended and wraps around once. Free blocks are kept in a tree
 * ordered by offset whose every subtree knows its largest block (heap.h,
 * blocktree.h), so each leg of the search is one O(log n) descent; frees
 * coalesce with both neighbours.
 *
 * Invariants: those of heap.h; the rover is an address in [0, capacity]; a
 * request takes the first fitting free block at or after the rover, else the
 * first fitting one from address 0.
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "alloc/heap.h"

typedef struct next_fit {
    strata_heap heap;
    uint64_t rover; /* end of the last allocation */
} next_fit;

static const strata_param_def next_fit_params[] = {
    {NULL, 0, NULL, NULL, NULL},
};

static void *next_fit_create(const strata_alloc_config *cfg, GError **err)
{
    next_fit *nf = g_new0(next_fit, 1);
    if (!strata_heap_init(&nf->heap, cfg->capacity, cfg->alignment, STRATA_HEAP_BY_OFFSET, err)) {
        g_free(nf);
        return NULL;
    }
    return nf;
}

static void next_fit_destroy(void *self)
{
    next_fit *nf = self;
    strata_heap_clear(&nf->heap);
    g_free(nf);
}

static bool next_fit_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    next_fit *nf = self;
    strata_heap *h = &nf->heap;
    uint64_t rounded = strata_heap_round(h, size);
    if (rounded == 0)
        return false;
    /* The free block holding the rover (it may start below it), then the
     * blocks above the rover, then from address 0 (those below the rover are
     * all that is left: a fit at or above it was found first). */
    strata_heap_block *b = strata_heap_free_at(h, nf->rover);
    if (!b || b->size < rounded)
        b = strata_heap_first_from(h, nf->rover, rounded);
    if (!b)
        b = strata_heap_first_from(h, 0, rounded);
    if (!b)
        return false;
    b = strata_heap_take(h, b, rounded, id, size);
    *offset = b->offset;
    nf->rover = b->offset + rounded;
    assert(nf->rover <= h->capacity); /* the rover is an address in [0, capacity] */
    return true;
}

static void next_fit_free(void *self, uint64_t id)
{
    next_fit *nf = self;
    strata_heap_free(&nf->heap, id);
}

static void next_fit_stats(const void *self, strata_alloc_stats *out)
{
    const next_fit *nf = self;
    strata_heap_stats(&nf->heap, out);
}

static void next_fit_walk(const void *self, strata_block_visit visit, void *user)
{
    const next_fit *nf = self;
    strata_heap_walk(&nf->heap, visit, user);
}

const strata_alloc_type strata_alloc_next_fit = {
    .name = "next-fit",
    .summary = "first free block that fits after the last allocation (roving pointer), coalescing",
    .params = next_fit_params,
    .create = next_fit_create,
    .destroy = next_fit_destroy,
    .alloc = next_fit_alloc,
    .free = next_fit_free,
    .release = NULL,
    .stats = next_fit_stats,
    .walk = next_fit_walk,
    .plan = NULL,
};
