/*
 * bfc.c: the best-fit-with-coalescing allocator of TensorFlow/XLA
 * (xla/tsl/framework/bfc_allocator.cc), as JAX and TensorFlow use on GPUs
 * and TPUs.
 *
 * Design, following the source:
 *  - requests are rounded up to 256 bytes (kMinAllocationSize);
 *  - free chunks sit in 21 bins; bin i holds chunks of [256 << i,
 *    256 << (i+1)) bytes (the last bin everything larger), each bin ordered
 *    by (size, address); a request searches its bin and the bins above for
 *    the smallest chunk that fits (FindChunkPtr);
 *  - a chunk is split when it is at least twice the request, or when the
 *    remainder is at least the maximum internal fragmentation (128 MiB, or
 *    fragmentation_fraction x memory limit when set);
 *  - a freed chunk coalesces with free neighbours in the same region;
 *  - memory comes from the device in regions. The memory limit is
 *    memory_fraction x capacity (JAX's XLA_PYTHON_CLIENT_MEM_FRACTION, 0.75
 *    by default). Without allow_growth one region of the whole limit is
 *    taken at start (JAX's preallocation). With allow_growth regions start
 *    at 2 MiB and double (Extend(): the region size doubles until the
 *    request fits, and doubles again after a region of the current size);
 *    a failed device allocation backpedals once to 90% steps;
 *  - garbage_collection: when extending fails, regions holding no live
 *    chunk are returned to the device and the extension retried
 *    (DeallocateFreeRegions). release() does the same (allow_growth only).
 * Regions are placed in the device address space [0, capacity) first-fit.
 *
 * Invariants: the chunks of a region tile it in address order; no two free
 * neighbours in a region (eager coalescing); every free chunk is in the bin
 * of its size and no used chunk is in a bin; reserved = sum of region sizes
 * <= memory limit <= capacity.
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "core/error.h"

#define BFC_MIN_ALLOCATION 256u
#define BFC_NUM_BINS 21
#define BFC_MAX_INTERNAL_FRAGMENTATION (UINT64_C(128) << 20)
#define BFC_INITIAL_GROWTH_REGION (UINT64_C(2) << 20)

typedef struct bfc_region bfc_region;

typedef struct bfc_chunk {
    uint64_t offset, size;
    uint64_t id, requested;
    bool used;
    int bin;                       /* bin when free, -1 when used */
    struct bfc_chunk *prev, *next; /* address neighbours within the region */
    bfc_region *region;
} bfc_chunk;

struct bfc_region {
    uint64_t base, size;
    uint32_t number;
    bfc_chunk *head;
};

typedef struct bfc {
    uint64_t capacity, memory_limit, max_internal_fragmentation;
    bool allow_growth, garbage_collection, started_backpedal;
    uint64_t curr_region_bytes;
    uint32_t next_region_number;
    GPtrArray *regions;  /* bfc_region *, by base */
    GTree *bins[BFC_NUM_BINS];
    GHashTable *live;    /* &chunk->id -> chunk */
    uint64_t allocated, used_bytes, reserved;
} bfc;

static const strata_param_def bfc_params[] = {
    {"memory_fraction", STRATA_PARAM_DOUBLE, "0.75",
     "fraction of the capacity the allocator may hold (XLA_PYTHON_CLIENT_MEM_FRACTION)", NULL},
    {"allow_growth", STRATA_PARAM_BOOL, "false",
     "grow regions on demand (2 MiB, doubling) instead of preallocating the whole limit", NULL},
    {"garbage_collection", STRATA_PARAM_BOOL, "false",
     "when extending fails, return regions without live chunks and retry", NULL},
    {"fragmentation_fraction", STRATA_PARAM_DOUBLE, "0",
     "split a chunk when the remainder is at least this fraction of the limit (0: 128 MiB)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static uint64_t bfc_round(uint64_t bytes)
{
    if (bytes < BFC_MIN_ALLOCATION)
        return BFC_MIN_ALLOCATION;
    if (bytes > UINT64_MAX - BFC_MIN_ALLOCATION)
        return 0;
    return (bytes + BFC_MIN_ALLOCATION - 1) & ~(uint64_t)(BFC_MIN_ALLOCATION - 1);
}

static int bfc_bin_for_size(uint64_t bytes)
{
    uint64_t v = (bytes < BFC_MIN_ALLOCATION ? BFC_MIN_ALLOCATION : bytes) >> 8;
    int b = 63 - __builtin_clzll(v);
    return b < BFC_NUM_BINS - 1 ? b : BFC_NUM_BINS - 1;
}

static gint bfc_cmp_chunk(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const bfc_chunk *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return 0;
}

static void bfc_bin_insert(bfc *a, bfc_chunk *c)
{
    c->bin = bfc_bin_for_size(c->size);
    g_tree_insert(a->bins[c->bin], c, c);
}

static void bfc_bin_remove(bfc *a, bfc_chunk *c)
{
    g_tree_remove(a->bins[c->bin], c);
    c->bin = -1;
}

#ifndef NDEBUG
/* Chunk c against its neighbours and its bin (O(log n)): the invariants
 * where they touch c. */
static bool bfc_chunk_ok(const bfc *a, const bfc_chunk *c)
{
    const bfc_region *r = c->region;
    return c->size > 0
        && (c->prev ? c->prev->next == c && c->prev->offset + c->prev->size == c->offset
                    : r->head == c && c->offset == r->base)              /* chunks tile the region */
        && (c->next ? c->next->prev == c && c->offset + c->size == c->next->offset
                    : c->offset + c->size == r->base + r->size)          /* chunks tile the region */
        && (c->used ? c->bin == -1                                       /* no used chunk in a bin */
                    : (!c->prev || c->prev->used) && (!c->next || c->next->used) /* no free neighbours */
                          && c->bin == bfc_bin_for_size(c->size)         /* in the bin of its size */
                          && g_tree_lookup(a->bins[c->bin], c) == c);
}

/* reserved <= memory limit <= capacity (O(1)). */
static bool bfc_limits_ok(const bfc *a)
{
    return a->allocated <= a->used_bytes && a->used_bytes <= a->reserved && a->reserved <= a->memory_limit
        && a->memory_limit <= a->capacity;
}

/* Every invariant over every chunk (O(n log n)): for destroy. */
static bool bfc_ok(const bfc *a)
{
    uint64_t reserved = 0, used = 0, allocated = 0, n_free = 0, n_used = 0, in_bins = 0;
    for (guint i = 0; i < a->regions->len; i++) {
        const bfc_region *r = g_ptr_array_index(a->regions, i);
        if (i > 0) {
            const bfc_region *q = g_ptr_array_index(a->regions, i - 1);
            if (q->base + q->size > r->base) /* regions by base, disjoint */
                return false;
        }
        reserved += r->size;
        for (const bfc_chunk *c = r->head; c; c = c->next) {
            if (c->region != r || !bfc_chunk_ok(a, c))
                return false;
            if (c->used) {
                n_used++;
                used += c->size;
                allocated += c->requested;
                if (g_hash_table_lookup(a->live, &c->id) != c)
                    return false;
            } else {
                n_free++;
            }
        }
    }
    for (int b = 0; b < BFC_NUM_BINS; b++)
        in_bins += (uint64_t)g_tree_nnodes(a->bins[b]);
    return bfc_limits_ok(a) && reserved == a->reserved && used == a->used_bytes && allocated == a->allocated
        && n_free == in_bins && n_used == g_hash_table_size(a->live);
}
#endif

/* The device's allocator: first-fit placement of a region in [0, capacity). */
static bool bfc_device_alloc(const bfc *a, uint64_t bytes, uint64_t *base)
{
    uint64_t at = 0;
    for (guint i = 0; i < a->regions->len; i++) {
        const bfc_region *r = g_ptr_array_index(a->regions, i);
        if (r->base >= at && r->base - at >= bytes)
            break;
        at = r->base + r->size;
    }
    if (at > a->capacity || a->capacity - at < bytes)
        return false;
    *base = at;
    return true;
}

static gint bfc_cmp_region(gconstpointer a, gconstpointer b)
{
    const bfc_region *x = *(bfc_region *const *)a, *y = *(bfc_region *const *)b;
    return x->base < y->base ? -1 : x->base > y->base ? 1 : 0;
}

static void bfc_add_region(bfc *a, uint64_t base, uint64_t bytes)
{
    bfc_region *r = g_new0(bfc_region, 1);
    r->base = base;
    r->size = bytes;
    r->number = a->next_region_number++;
    bfc_chunk *c = g_new0(bfc_chunk, 1);
    c->offset = base;
    c->size = bytes;
    c->region = r;
    r->head = c;
    bfc_bin_insert(a, c);
    g_ptr_array_add(a->regions, r);
    g_ptr_array_sort(a->regions, bfc_cmp_region);
    a->reserved += bytes;
}

/* Extend(): ask the device for a new region large enough for rounded bytes. */
static bool bfc_extend(bfc *a, uint64_t rounded)
{
    uint64_t available = (a->memory_limit - a->reserved) / BFC_MIN_ALLOCATION * BFC_MIN_ALLOCATION;
    if (rounded > available)
        return false;
    bool increased = false;
    while (rounded > a->curr_region_bytes) {
        a->curr_region_bytes *= 2;
        increased = true;
    }
    uint64_t bytes = a->curr_region_bytes < available ? a->curr_region_bytes : available;
    uint64_t base = 0;
    bool ok = bfc_device_alloc(a, bytes, &base);
    if (!ok && !a->started_backpedal) {
        a->started_backpedal = true;
        while (!ok) {
            bytes = bfc_round((uint64_t)((double)bytes * 0.9));
            if (bytes < rounded)
                break;
            ok = bfc_device_alloc(a, bytes, &base);
        }
    }
    if (!ok)
        return false;
    if (!increased)
        a->curr_region_bytes *= 2;
    bfc_add_region(a, base, bytes);
    return true;
}

static void bfc_free_region(bfc *a, bfc_region *r)
{
    bfc_chunk *c = r->head;
    bfc_bin_remove(a, c);
    a->reserved -= r->size;
    g_ptr_array_remove(a->regions, r); /* keeps order */
    g_free(c);
    g_free(r);
}

/* DeallocateFreeRegions(): regions without a live chunk go back to the device. */
static bool bfc_deallocate_free_regions(bfc *a, uint64_t rounded, bool force)
{
    uint64_t free_bytes = 0;
    for (guint i = 0; i < a->regions->len; i++) {
        const bfc_region *r = g_ptr_array_index(a->regions, i);
        if (!r->head->used && r->head->next == NULL)
            free_bytes += r->size;
    }
    if (free_bytes == 0)
        return false;
    if (!force && rounded > a->memory_limit - a->reserved + free_bytes)
        return false;
    for (guint i = 0; i < a->regions->len;) {
        bfc_region *r = g_ptr_array_index(a->regions, i);
        if (!r->head->used && r->head->next == NULL)
            bfc_free_region(a, r);
        else
            i++;
    }
    return true;
}

static void *bfc_create(const strata_alloc_config *cfg, GError **err)
{
    double fraction = strata_params_double(cfg->params, "memory_fraction");
    double frag = strata_params_double(cfg->params, "fragmentation_fraction");
    if (!(fraction > 0.0 && fraction <= 1.0)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "memory_fraction must be in (0, 1], got %g", fraction);
        return NULL;
    }
    if (!(frag >= 0.0 && frag <= 1.0)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "fragmentation_fraction must be in [0, 1], got %g", frag);
        return NULL;
    }
    bfc *a = g_new0(bfc, 1);
    a->capacity = cfg->capacity;
    a->memory_limit = (uint64_t)(fraction * (double)cfg->capacity);
    a->memory_limit = a->memory_limit / BFC_MIN_ALLOCATION * BFC_MIN_ALLOCATION;
    a->max_internal_fragmentation =
        frag > 0.0 ? (uint64_t)(frag * (double)a->memory_limit) : BFC_MAX_INTERNAL_FRAGMENTATION;
    a->allow_growth = strata_params_bool(cfg->params, "allow_growth");
    a->garbage_collection = strata_params_bool(cfg->params, "garbage_collection");
    a->regions = g_ptr_array_new();
    for (int i = 0; i < BFC_NUM_BINS; i++)
        a->bins[i] = g_tree_new_full(bfc_cmp_chunk, NULL, NULL, NULL);
    a->live = g_hash_table_new(g_int64_hash, g_int64_equal);
    if (a->allow_growth) {
        uint64_t first = a->memory_limit < BFC_INITIAL_GROWTH_REGION ? a->memory_limit
                                                                      : BFC_INITIAL_GROWTH_REGION;
        a->curr_region_bytes = bfc_round(first);
    } else {
        a->curr_region_bytes = a->memory_limit;
        if (a->memory_limit > 0)
            bfc_add_region(a, 0, a->memory_limit);
        a->curr_region_bytes = a->memory_limit * 2;
    }
    return a;
}

static void bfc_destroy(void *self)
{
    bfc *a = self;
    assert(bfc_ok(a)); /* every invariant, every chunk */
    for (guint i = 0; i < a->regions->len; i++) {
        bfc_region *r = g_ptr_array_index(a->regions, i);
        for (bfc_chunk *c = r->head; c;) {
            bfc_chunk *next = c->next;
            g_free(c);
            c = next;
        }
        g_free(r);
    }
    g_ptr_array_free(a->regions, TRUE);
    for (int i = 0; i < BFC_NUM_BINS; i++)
        g_tree_destroy(a->bins[i]);
    g_hash_table_destroy(a->live);
    g_free(a);
}

/* FindChunkPtr(): best fit from the request's bin upwards; split; mark used. */
static bfc_chunk *bfc_find_chunk(bfc *a, uint64_t rounded, uint64_t id, uint64_t requested)
{
    bfc_chunk key = {.size = rounded, .offset = 0};
    for (int b = bfc_bin_for_size(rounded); b < BFC_NUM_BINS; b++) {
        GTreeNode *n = g_tree_lower_bound(a->bins[b], &key);
        if (!n)
            continue;
        bfc_chunk *c = g_tree_node_value(n);
        bfc_bin_remove(a, c);
        if (c->size >= rounded * 2 || c->size - rounded >= a->max_internal_fragmentation) {
            bfc_chunk *rest = g_new0(bfc_chunk, 1);
            rest->offset = c->offset + rounded;
            rest->size = c->size - rounded;
            rest->region = c->region;
            rest->prev = c;
            rest->next = c->next;
            if (c->next)
                c->next->prev = rest;
            c->next = rest;
            c->size = rounded;
            bfc_bin_insert(a, rest);
        }
        c->used = true;
        c->id = id;
        c->requested = requested;
        g_hash_table_insert(a->live, &c->id, c);
        a->allocated += requested;
        a->used_bytes += c->size;
        return c;
    }
    return NULL;
}

static bool bfc_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    (void)stream;
    bfc *a = self;
    uint64_t rounded = bfc_round(size);
    if (rounded == 0)
        return false;
    bfc_chunk *c = bfc_find_chunk(a, rounded, id, size);
    if (!c && bfc_extend(a, rounded))
        c = bfc_find_chunk(a, rounded, id, size);
    if (!c && a->garbage_collection && bfc_deallocate_free_regions(a, rounded, false) &&
        bfc_extend(a, rounded))
        c = bfc_find_chunk(a, rounded, id, size);
    if (!c)
        return false;
    assert(bfc_chunk_ok(a, c));                      /* tiling; no used chunk in a bin */
    assert(!c->next || bfc_chunk_ok(a, c->next));    /* the split-off rest, in its bin */
    assert(bfc_limits_ok(a));                        /* reserved <= limit <= capacity */
    *offset = c->offset;
    return true;
}

/* Absorb c->next (free) into c. */
static void bfc_merge_next(bfc_chunk *c)
{
    bfc_chunk *n = c->next;
    c->size += n->size;
    c->next = n->next;
    if (n->next)
        n->next->prev = c;
    g_free(n);
}

static void bfc_free(void *self, uint64_t id)
{
    bfc *a = self;
    bfc_chunk *c = g_hash_table_lookup(a->live, &id);
    if (!c)
        return;
    g_hash_table_remove(a->live, &id);
    a->allocated -= c->requested;
    a->used_bytes -= c->size;
    c->used = false;
    c->id = 0;
    c->requested = 0;
    if (c->next && !c->next->used) {
        bfc_bin_remove(a, c->next);
        bfc_merge_next(c);
    }
    if (c->prev && !c->prev->used) {
        bfc_chunk *p = c->prev;
        bfc_bin_remove(a, p);
        bfc_merge_next(p);
        c = p;
    }
    bfc_bin_insert(a, c);
    assert(bfc_chunk_ok(a, c)); /* coalesced, in the bin of its size */
    assert(bfc_limits_ok(a));
}

static void bfc_release(void *self)
{
    bfc *a = self;
    if (a->allow_growth)
        bfc_deallocate_free_regions(a, 0, true);
}

static void bfc_stats(const void *self, strata_alloc_stats *out)
{
    const bfc *a = self;
    *out = (strata_alloc_stats){0};
    out->allocated = a->allocated;
    out->reserved = a->reserved;
    out->free_in_reserved = a->reserved - a->used_bytes;
    out->internal_waste = a->used_bytes - a->allocated;
    out->n_segments = a->regions->len;
    for (int b = BFC_NUM_BINS - 1; b >= 0; b--) {
        GTreeNode *n = g_tree_node_last(a->bins[b]);
        if (n) {
            out->largest_free = ((const bfc_chunk *)g_tree_node_value(n))->size;
            break;
        }
    }
}

static void bfc_walk(const void *self, strata_block_visit visit, void *user)
{
    const bfc *a = self;
    for (guint i = 0; i < a->regions->len; i++) {
        const bfc_region *r = g_ptr_array_index(a->regions, i);
        for (const bfc_chunk *c = r->head; c; c = c->next) {
            strata_block_visit_fields(visit, user, c->offset, c->size, c->used, c->id, c->requested,
                                      r->number);
        }
    }
}

const strata_alloc_type strata_alloc_bfc = {
    .name = "bfc",
    .summary = "TSL/XLA best-fit with coalescing: 256 B rounding, 21 bins, regions (JAX default)",
    .params = bfc_params,
    .create = bfc_create,
    .destroy = bfc_destroy,
    .alloc = bfc_alloc,
    .free = bfc_free,
    .release = bfc_release,
    .stats = bfc_stats,
    .walk = bfc_walk,
    .plan = NULL,
};
