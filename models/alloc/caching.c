/*
 * caching.c: PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator).
 *
 * Design, following the source:
 *  - requests are rounded up to 512 bytes (kMinBlockSize), or to the next
 *    1/N power-of-two division when roundup_power2_divisions = N > 1
 *    (round_size, roundup_power2_next_division); N is per power-of-two
 *    interval of the size, from 1 MiB to 32 GiB and beyond
 *    (CUDAAllocatorConfig::roundup_power2_divisions(size): 16 intervals,
 *    sizes under 1 MiB use the first, over 32 GiB the last);
 *  - two pools: small (rounded size <= 1 MiB, kSmallSize) and large. A
 *    miss in the pool allocates a segment from the device (cudaMalloc):
 *    2 MiB (kSmallBuffer) for small requests, large_segment_size (20 MiB,
 *    kLargeBuffer, by default) for requests under 10 MiB (kMinLargeAlloc),
 *    else the request rounded up to 2 MiB (kRoundLarge)
 *    (get_allocation_size);
 *  - best fit per pool and stream: a pool is ordered by (stream, size,
 *    address) and a request takes the first block at or after (its stream,
 *    its size), if it is on its stream (get_free_block);
 *  - max_split_size (more than 20 MiB, as parseMaxSplitSize requires): a
 *    request below it never takes a cached block at or above it, a request
 *    at or above it takes only a block less than max_non_split_rounding
 *    (20 MiB by default) larger, and such blocks are never split;
 *  - split (should_split): small pool when the remainder is >= 512 bytes;
 *    large pool when the request is below max_split_size and the remainder
 *    is > 1 MiB; with expandable segments whenever the remainder >= 512;
 *  - free: a block merges with free neighbours of its segment
 *    (try_merge_blocks) and goes back to its pool; memory stays reserved;
 *  - the device: cudaMalloc fails when reserved + size exceeds the
 *    capacity, or device_limit (the memory the process can get when others
 *    share the GPU), or per_process_memory_fraction x capacity
 *    (allowed_memory_maximum, set_fraction);
 *  - garbage_collection_threshold T (only with per_process_memory_fraction,
 *    as in PyTorch): before a device allocation, when reserved exceeds
 *    T x allowed_memory_maximum, release whole cached large-pool blocks whose
 *    age (get_free_block calls on the pool since the block went back to it)
 *    is at least the mean age, repeating until reserved is back under the
 *    threshold or nothing is freed (garbage_collect_cached_blocks);
 *  - out of memory (the device cannot give the segment): release oversize
 *    cached blocks (release_available_cached_blocks, with max_split_size),
 *    then every cached whole segment (release_cached_blocks, i.e.
 *    empty_cache), and retry the device allocation once more;
 *  - expandable_segments (ExpandableSegment, map_block, unmap_block): one
 *    segment per (pool, stream) whose virtual
 *    range is reserved up front and mapped on demand in pages of 2 MiB
 *    (small pool) or 20 MiB (large pool); reserved bytes are mapped pages;
 *    its blocks tile the whole window, unmapped ranges being blocks in no
 *    pool; a request no free block serves takes the first unmapped block
 *    by address that, with the free block before it and the free or
 *    unmapped ones after it, spans the request, and maps whole pages until
 *    one free block holds it (find_expandable_block,
 *    try_allocate_expandable_block); release unmaps the whole pages inside
 *    every free block, in the middle of a segment as at its end.
 *
 * The device: cudaMalloc succeeds when reserved + size <= the limit above
 * (the GPU maps physical pages anywhere, so reserved bytes, not contiguity,
 * bound it). Segments get virtual addresses first-fit in [0, capacity) and
 * beyond it only when no gap is left; expandable segments get one window of
 * capacity bytes each. stats.address_space reports the range used.
 *
 * Invariants: the blocks of a segment tile it in address order (its whole
 * window: the unmapped ranges of an expandable segment are blocks too, and
 * the segment's size is the sum of its mapped blocks); no two free mapped
 * neighbours in a segment, no two unmapped ones; every free mapped block
 * is in its pool and in the all-free index, used and unmapped blocks in
 * neither (a block being handed out is out of both for the moment);
 * reserved = sum of segment (mapped) sizes <= limit <= capacity. Debug
 * builds assert them at the blocks each alloc and free touches, and over
 * every block at destroy.
 *
 * Source: c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator: malloc,
 * get_free_block, alloc_block, garbage_collect_cached_blocks,
 * release_available_cached_blocks, release_cached_blocks) and
 * c10/cuda/CUDAAllocatorConfig.cpp (the settings and their checks).
 */
#include <assert.h>
#include <stdarg.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/caching.h"
#include "core/error.h"

typedef struct caching_segment caching_segment;

typedef struct caching_block {
    uint64_t offset, size;
    uint64_t id, requested;
    uint64_t gc_base; /* the pool's get_free_block calls when it was pooled */
    uint32_t stream;
    bool used, small;
    bool mapped; /* false: pages of an expandable segment not backed (no pool) */
    struct caching_block *prev, *next; /* address neighbours within the segment */
    caching_segment *segment;
} caching_block;

struct caching_segment {
    uint64_t base, size; /* size: mapped bytes (all of it unless expandable) */
    uint64_t window;     /* virtual bytes reserved (expandable), else size */
    uint32_t number, stream;
    bool small, expandable;
    caching_block *head;
};

typedef struct caching {
    uint64_t capacity;
    uint64_t limit;          /* what cudaMalloc may reserve: <= capacity */
    uint64_t max_split_size; /* UINT64_MAX when unset */
    uint64_t max_non_split_rounding, large_segment;
    uint64_t divisions[CACHING_INTERVALS];
    double gc_threshold;     /* 0: off */
    uint64_t pool_calls[2];  /* get_free_block calls per pool (gc ages) */
    bool expandable;
    uint32_t next_segment_number;
    GPtrArray *segments;  /* caching_segment *, by base */
    GTree *pools[2];      /* [0] large, [1] small: free blocks by (stream, size, offset) */
    GTree *all_free;      /* free blocks by (size, offset) */
    GHashTable *live;     /* &block->id -> block */
    uint64_t allocated, used_bytes, reserved, address_space;
} caching;

static const strata_param_def caching_params[] = {
    {"max_split_size", STRATA_PARAM_SIZE, NULL,
     "blocks at least this large are never split (PYTORCH_CUDA_ALLOC_CONF max_split_size_mb); "
     "unset: no limit", NULL},
    {"roundup_power2_divisions", STRATA_PARAM_INT, "0",
     "round requests up to 1/N steps between powers of two (0 or 1: 512-byte rounding)", NULL},
    {"expandable_segments", STRATA_PARAM_BOOL, "false",
     "one segment per pool and stream, grown in 2 MiB (small) / 20 MiB (large) pages", NULL},
    {"roundup_power2_intervals", STRATA_PARAM_STRING, NULL,
     "divisions per size interval, PyTorch's [256:1,512:2,>:4] written 256:1/512:2/>:4 "
     "(interval starts in MiB, powers of two; overrides roundup_power2_divisions)", NULL},
    {"max_non_split_rounding", STRATA_PARAM_SIZE, NULL,
     "a request at or above max_split_size takes a cached block at most this much larger "
     "(max_non_split_rounding_mb); unset: 20MiB", NULL},
    {"large_segment_size", STRATA_PARAM_SIZE, NULL,
     "segment size for large-pool requests under 10 MiB (large_segment_size_mb); unset: 20MiB",
     NULL},
    {"device_limit", STRATA_PARAM_SIZE, NULL,
     "the most the process can reserve (other processes hold the rest); unset: the capacity",
     NULL},
    {"per_process_memory_fraction", STRATA_PARAM_DOUBLE, NULL,
     "torch.cuda.set_per_process_memory_fraction: reserve at most this share of the capacity",
     NULL},
    {"garbage_collection_threshold", STRATA_PARAM_DOUBLE, NULL,
     "with per_process_memory_fraction: free old cached blocks once reserved exceeds this "
     "share of the allowed maximum (0 < T < 1)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static gint caching_cmp_pool(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const caching_block *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return strata_block_order(x->size, x->offset, y->size, y->offset);
}

static gint caching_cmp_size(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const caching_block *x = a, *y = b;
    return strata_block_order(x->size, x->offset, y->size, y->offset);
}

static gint caching_cmp_segment(gconstpointer a, gconstpointer b)
{
    const caching_segment *x = *(caching_segment *const *)a, *y = *(caching_segment *const *)b;
    return x->base < y->base ? -1 : x->base > y->base ? 1 : 0;
}

static void caching_pool_add(caching *c, caching_block *b)
{
    b->gc_base = c->pool_calls[b->small];
    g_tree_insert(c->pools[b->small], b, b);
    g_tree_insert(c->all_free, b, b);
}

static void caching_pool_remove(caching *c, caching_block *b)
{
    g_tree_remove(c->pools[b->small], b);
    g_tree_remove(c->all_free, b);
}

static uint64_t caching_round_up(uint64_t x, uint64_t step)
{
    return (x + step - 1) / step * step;
}

/* The roundup interval of a size: floor(log2(size / 1 MiB)), in [0, 15]. */
static int caching_interval(uint64_t size)
{
    int index = 63 - __builtin_clzll(size) - 20;
    return index < 0 ? 0 : index >= CACHING_INTERVALS ? CACHING_INTERVALS - 1 : index;
}

/* round_size() with roundup_power2_next_division(). */
static uint64_t caching_round_size(const caching *c, uint64_t size)
{
    if (size < CACHING_MIN_BLOCK)
        return CACHING_MIN_BLOCK;
    if (size > UINT64_MAX / 2)
        return 0;
    uint64_t divisions = c->divisions[caching_interval(size)];
    if (divisions > 1 && size > CACHING_MIN_BLOCK * divisions) {
        if ((size & (size - 1)) == 0)
            return size;
        uint64_t floor2 = UINT64_C(1) << (63 - __builtin_clzll(size));
        uint64_t division = floor2 >> (63 - __builtin_clzll(divisions));
        if (division == 0)
            return floor2 << 1;
        uint64_t round_floor = size & ~(division - 1);
        return round_floor == size ? size : round_floor + division;
    }
    return caching_round_up(size, CACHING_MIN_BLOCK);
}

static uint64_t caching_allocation_size(const caching *c, uint64_t size)
{
    if (size <= CACHING_SMALL_SIZE)
        return CACHING_SMALL_BUFFER;
    if (size < CACHING_MIN_LARGE_ALLOC)
        return c->large_segment;
    return caching_round_up(size, CACHING_ROUND_LARGE);
}

static bool caching_bad(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool caching_bad(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "caching: %s", msg);
    g_free(msg);
    return false;
}

static bool caching_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* roundup_power2_intervals, read as parseRoundUpPower2Divisions reads
 * PyTorch's list: START_MIB:N entries ('/' for PyTorch's ','); the first
 * entry also sets every interval below its own; `>:N` sets every interval
 * from the last one named (included) to the end. */
static bool caching_parse_intervals(const char *text, uint64_t *div, GError **err)
{
    char **items = g_strsplit(text, "/", -1);
    size_t last = 0;
    bool ok = items[0] != NULL;
    for (size_t i = 0; ok && items[i]; i++) {
        char *colon = strchr(items[i], ':'), *end = NULL;
        uint64_t n = colon ? g_ascii_strtoull(colon + 1, &end, 10) : 0;
        ok = colon && end && *end == '\0' && end != colon + 1 && (n <= 1 || caching_power_of_two(n));
        if (!ok)
            break;
        *colon = '\0';
        if (strcmp(items[i], ">") == 0) {
            for (size_t k = last; k < CACHING_INTERVALS; k++)
                div[k] = n;
            continue;
        }
        uint64_t start = g_ascii_strtoull(items[i], &end, 10);
        ok = *end == '\0' && caching_power_of_two(start);
        if (!ok)
            break;
        size_t index = (size_t)(63 - __builtin_clzll(start));
        index = index >= CACHING_INTERVALS ? CACHING_INTERVALS - 1 : index;
        if (last == 0)
            for (size_t k = 0; k < index; k++)
                div[k] = n;
        div[index] = n;
        last = index;
    }
    g_strfreev(items);
    if (!ok)
        return caching_bad(err, "roundup_power2_intervals=%s: expected START:N entries separated "
                                "by '/', START a power of two (MiB) or '>', N 0, 1 or a power of two",
                           text);
    return true;
}

/* The settings, checked as CUDAAllocatorConfig checks them. */
static bool caching_configure(caching *c, const strata_params *p, GError **err)
{
    int64_t divisions = strata_params_int(p, "roundup_power2_divisions");
    if (divisions < 0 || divisions > 64 || (divisions > 1 && (divisions & (divisions - 1)) != 0))
        return caching_bad(err, "roundup_power2_divisions must be 0 or a power of two up to 64, got %" G_GINT64_FORMAT,
                           divisions);
    for (int i = 0; i < CACHING_INTERVALS; i++)
        c->divisions[i] = (uint64_t)divisions;
    const char *intervals = strata_params_string(p, "roundup_power2_intervals");
    if (intervals && !caching_parse_intervals(intervals, c->divisions, err))
        return false;
    c->max_split_size = strata_params_is_set(p, "max_split_size")
                            ? strata_params_size(p, "max_split_size")
                            : UINT64_MAX;
    /* 0 was taken as unset (no limit), exit 0; PyTorch refuses it as any value up to 20 MiB
     * (pytorch/pytorch c10/cuda/CUDAAllocatorConfig.cpp, CachingAllocatorConfig::parseMaxSplitSize:
     * TORCH_CHECK(val1 > kLargeBuffer / (1024 * 1024), "... max_split_size_mb too small ...")) */
    if (c->max_split_size <= CACHING_LARGE_BUFFER)
        return caching_bad(err, "max_split_size must be more than 20MiB (max_split_size_mb > 20), "
                                "got %" G_GUINT64_FORMAT " bytes", c->max_split_size);
    c->max_non_split_rounding = strata_params_is_set(p, "max_non_split_rounding")
                                    ? strata_params_size(p, "max_non_split_rounding")
                                    : CACHING_LARGE_BUFFER;
    if (c->max_non_split_rounding < CACHING_LARGE_BUFFER)
        return caching_bad(err, "max_non_split_rounding must be at least 20MiB, got %" G_GUINT64_FORMAT " bytes",
                           c->max_non_split_rounding);
    c->large_segment = strata_params_is_set(p, "large_segment_size")
                           ? strata_params_size(p, "large_segment_size")
                           : CACHING_LARGE_BUFFER;
    if (c->large_segment < CACHING_MIN_LARGE_ALLOC || c->large_segment % CACHING_ROUND_LARGE)
        return caching_bad(err, "large_segment_size must be a multiple of 2MiB of at least 10MiB, "
                                "got %" G_GUINT64_FORMAT " bytes", c->large_segment);
    c->limit = c->capacity;
    if (strata_params_is_set(p, "device_limit") && strata_params_size(p, "device_limit") < c->limit)
        c->limit = strata_params_size(p, "device_limit");
    if (strata_params_is_set(p, "per_process_memory_fraction")) {
        double f = strata_params_double(p, "per_process_memory_fraction");
        if (!(f >= 0 && f <= 1))
            return caching_bad(err, "per_process_memory_fraction must be within [0, 1], got %g", f);
        uint64_t allowed = (uint64_t)(f * (double)c->capacity);
        c->limit = allowed < c->limit ? allowed : c->limit;
        c->gc_threshold = strata_params_is_set(p, "garbage_collection_threshold")
                              ? strata_params_double(p, "garbage_collection_threshold")
                              : 0;
    }
    if (strata_params_is_set(p, "garbage_collection_threshold")) {
        double g = strata_params_double(p, "garbage_collection_threshold");
        if (!(g >= 0 && g < 1))
            return caching_bad(err, "garbage_collection_threshold must be within [0, 1), got %g", g);
    }
    c->expandable = strata_params_bool(p, "expandable_segments");
    return true;
}

static void caching_destroy(void *self);

static void *caching_create(const strata_alloc_config *cfg, GError **err)
{
    caching *c = g_new0(caching, 1);
    c->capacity = cfg->capacity;
    c->segments = g_ptr_array_new();
    c->pools[0] = g_tree_new_full(caching_cmp_pool, NULL, NULL, NULL);
    c->pools[1] = g_tree_new_full(caching_cmp_pool, NULL, NULL, NULL);
    c->all_free = g_tree_new_full(caching_cmp_size, NULL, NULL, NULL);
    c->live = g_hash_table_new(g_int64_hash, g_int64_equal);
    if (!caching_configure(c, cfg->params, err)) {
        caching_destroy(c);
        return NULL;
    }
    return c;
}

#ifndef NDEBUG
/* Block b against its address neighbours and the pools (O(log n)). */
static bool caching_block_ok(const caching *c, const caching_block *b)
{
    const caching_segment *s = b->segment;
    bool pooled = g_tree_lookup(c->pools[b->small], b) == b && g_tree_lookup(c->all_free, b) == b;
    bool free_mapped = !b->used && b->mapped;
    return b->size > 0 && b->small == s->small && b->stream == s->stream && (b->mapped || !b->used)
        && (b->prev ? b->prev->next == b && b->prev->offset + b->prev->size == b->offset
                    : s->head == b && b->offset == s->base)              /* blocks tile the segment */
        && (b->next ? b->next->prev == b && b->offset + b->size == b->next->offset
                    : b->offset + b->size == s->base + s->window)        /* blocks tile the segment */
        && (!free_mapped || ((!b->prev || b->prev->used || !b->prev->mapped)
                             && (!b->next || b->next->used || !b->next->mapped))) /* merged */
        && (b->mapped || ((!b->prev || b->prev->mapped) && (!b->next || b->next->mapped)))
        && (free_mapped || !pooled) /* used and unmapped blocks in no pool */
        && (b->mapped || s->expandable);
}

/* reserved <= limit <= capacity (O(1)). */
static bool caching_limits_ok(const caching *c)
{
    return c->allocated <= c->used_bytes && c->used_bytes <= c->reserved && c->reserved <= c->limit
        && c->limit <= c->capacity;
}

/* Every invariant over every block (O(n log n)): for destroy. */
static bool caching_ok(const caching *c)
{
    uint64_t reserved = 0, used = 0, allocated = 0, n_free = 0, n_used = 0, end = 0;
    for (guint i = 0; i < c->segments->len; i++) {
        const caching_segment *s = g_ptr_array_index(c->segments, i);
        if (s->base < end) /* segments by base, windows disjoint */
            return false;
        end = s->base + s->window;
        uint64_t mapped = 0;
        for (const caching_block *b = s->head; b; b = b->next) {
            if (b->segment != s || !caching_block_ok(c, b))
                return false;
            if (b->mapped)
                mapped += b->size;
            if (b->used) {
                n_used++;
                used += b->size;
                allocated += b->requested;
                if (g_hash_table_lookup(c->live, &b->id) != b)
                    return false;
            } else if (b->mapped) {
                if (g_tree_lookup(c->pools[b->small], b) != b || g_tree_lookup(c->all_free, b) != b)
                    return false; /* every free mapped block in its pool and the index */
                n_free++;
            }
        }
        if (mapped != s->size)
            return false;
        reserved += mapped;
    }
    return caching_limits_ok(c) && reserved == c->reserved && used == c->used_bytes
        && allocated == c->allocated && n_used == g_hash_table_size(c->live)
        && n_free == (uint64_t)g_tree_nnodes(c->all_free)
        && n_free == (uint64_t)(g_tree_nnodes(c->pools[0]) + g_tree_nnodes(c->pools[1]));
}
#endif

static void caching_destroy(void *self)
{
    caching *c = self;
    assert(caching_ok(c)); /* every invariant, every block */
    for (guint i = 0; i < c->segments->len; i++) {
        caching_segment *s = g_ptr_array_index(c->segments, i);
        for (caching_block *b = s->head; b;) {
            caching_block *next = b->next;
            g_free(b);
            b = next;
        }
        g_free(s);
    }
    g_ptr_array_free(c->segments, TRUE);
    g_tree_destroy(c->pools[0]);
    g_tree_destroy(c->pools[1]);
    g_tree_destroy(c->all_free);
    g_hash_table_destroy(c->live);
    g_free(c);
}

/* get_free_block(): best fit in the pool on the request's stream. */
static caching_block *caching_get_free_block(caching *c, bool small, uint32_t stream, uint64_t size)
{
    if (c->gc_threshold > 0)
        c->pool_calls[small]++;
    caching_block key = {.stream = stream, .size = size, .offset = 0};
    GTreeNode *n = g_tree_lower_bound(c->pools[small], &key);
    if (!n)
        return NULL;
    caching_block *b = g_tree_node_value(n);
    if (b->stream != stream)
        return NULL;
    if (size < c->max_split_size && b->size >= c->max_split_size)
        return NULL;
    if (size >= c->max_split_size && b->size >= size + c->max_non_split_rounding)
        return NULL;
    caching_pool_remove(c, b);
    return b;
}

static uint64_t caching_address_space(const caching *c)
{
    uint64_t end = 0;
    for (guint i = 0; i < c->segments->len; i++) {
        const caching_segment *s = g_ptr_array_index(c->segments, i);
        if (s->base + s->window > end)
            end = s->base + s->window;
    }
    return end;
}

/* A new block of s, linked after prev (at the head when prev is NULL). */
static caching_block *caching_link(caching_segment *s, caching_block *prev, uint64_t offset,
                                   uint64_t size, bool mapped)
{
    caching_block *b = g_new0(caching_block, 1);
    b->offset = offset;
    b->size = size;
    b->stream = s->stream;
    b->small = s->small;
    b->mapped = mapped;
    b->segment = s;
    b->prev = prev;
    b->next = prev ? prev->next : s->head;
    if (b->next)
        b->next->prev = b;
    if (prev)
        prev->next = b;
    else
        s->head = b;
    return b;
}

/* A segment of `window` bytes: mapped whole, or (expandable) not at all. */
static caching_segment *caching_add_segment(caching *c, uint64_t base, uint64_t window,
                                            uint64_t mapped, bool small, uint32_t stream)
{
    caching_segment *s = g_new0(caching_segment, 1);
    s->base = base;
    s->window = window;
    s->size = mapped;
    s->small = small;
    s->stream = stream;
    s->expandable = c->expandable;
    s->number = c->next_segment_number++;
    caching_link(s, NULL, base, window, mapped > 0);
    g_ptr_array_add(c->segments, s);
    g_ptr_array_sort(c->segments, caching_cmp_segment);
    c->reserved += mapped;
    c->address_space = caching_address_space(c);
    return s;
}

/* alloc_block(): a fresh segment from the device; its block is not pooled. */
static caching_block *caching_alloc_segment(caching *c, bool small, uint32_t stream, uint64_t bytes)
{
    if (bytes > c->limit - c->reserved)
        return NULL;
    uint64_t at = 0;
    for (guint i = 0; i < c->segments->len; i++) {
        const caching_segment *s = g_ptr_array_index(c->segments, i);
        if (s->base >= at && s->base - at >= bytes)
            break;
        at = s->base + s->window;
    }
    return caching_add_segment(c, at, bytes, bytes, small, stream)->head;
}

static caching_segment *caching_expandable_segment(caching *c, bool small, uint32_t stream)
{
    for (guint i = 0; i < c->segments->len; i++) {
        caching_segment *s = g_ptr_array_index(c->segments, i);
        if (s->small == small && s->stream == stream)
            return s;
    }
    uint64_t window = caching_round_up(c->capacity, CACHING_LARGE_BUFFER);
    return caching_add_segment(c, caching_address_space(c), window, 0, small, stream);
}

static void caching_merge_next(caching_block *b)
{
    caching_block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    g_free(n);
}

static bool caching_free_mapped(const caching_block *b) { return b && !b->used && b->mapped; }

/* Merges a free mapped block with its free mapped neighbours (out of the
 * pools); returns the merged block, not pooled. */
static caching_block *caching_merge_free(caching *c, caching_block *b)
{
    if (caching_free_mapped(b->next)) {
        caching_pool_remove(c, b->next);
        caching_merge_next(b);
    }
    if (caching_free_mapped(b->prev)) {
        caching_block *p = b->prev;
        caching_pool_remove(c, p);
        caching_merge_next(p);
        b = p;
    }
    return b;
}

static uint64_t caching_page(const caching_segment *s)
{
    return s->small ? CACHING_SMALL_BUFFER : CACHING_LARGE_BUFFER;
}

/* map_block(): backs whole pages from the start of unmapped block u, at
 * least size bytes (at most u); the mapped part merges with its free
 * neighbours and is pooled. NULL when the device refuses. */
static caching_block *caching_map(caching *c, caching_block *u, uint64_t size)
{
    caching_segment *s = u->segment;
    uint64_t bytes = caching_round_up(size, caching_page(s));
    bytes = bytes < u->size ? bytes : u->size;
    if (bytes > c->limit - c->reserved)
        return NULL;
    if (bytes < u->size) {
        caching_link(s, u, u->offset + bytes, u->size - bytes, false);
        u->size = bytes;
    }
    u->mapped = true;
    s->size += bytes;
    c->reserved += bytes;
    u = caching_merge_free(c, u);
    caching_pool_add(c, u);
    return u;
}

/* find_expandable_block() and try_allocate_expandable_block() in the
 * (pool, stream) segment; the free block returned is out of the pool. */
static caching_block *caching_grow(caching *c, bool small, uint32_t stream, uint64_t size)
{
    caching_segment *s = caching_expandable_segment(c, small, stream);
    caching_block *cand = NULL;
    for (caching_block *u = s->head; u && !cand; u = u->next) {
        if (u->mapped)
            continue;
        caching_block *b = caching_free_mapped(u->prev) ? u->prev : u;
        uint64_t bytes = 0;
        for (const caching_block *x = b; x && !x->used && bytes < size; x = x->next)
            bytes += x->size;
        if (bytes >= size)
            cand = b;
    }
    if (cand && !cand->mapped)
        cand = caching_map(c, cand, size);
    while (cand && cand->size < size) {
        if (!cand->next || cand->next->mapped || cand->next->used)
            return NULL; /* cannot happen: the span above is free or unmapped */
        cand = caching_map(c, cand->next, size - cand->size);
    }
    if (cand)
        caching_pool_remove(c, cand);
    return cand;
}

static caching_block *caching_device_alloc(caching *c, bool small, uint32_t stream, uint64_t size)
{
    if (c->expandable)
        return caching_grow(c, small, stream, size);
    return caching_alloc_segment(c, small, stream, caching_allocation_size(c, size));
}

static void caching_drop_segment(caching *c, caching_segment *s)
{
    c->reserved -= s->size;
    g_ptr_array_remove(c->segments, s);
    g_free(s->head);
    g_free(s);
    c->address_space = caching_address_space(c);
}

/* release_block() of a cached whole segment. */
static void caching_release_block(caching *c, caching_block *b)
{
    caching_pool_remove(c, b);
    caching_drop_segment(c, b->segment);
}

/* unmap_block() of free block b of an expandable segment: the whole pages
 * inside it are unmapped, its ends stay free and mapped; the unmapped part
 * merges with unmapped neighbours. Returns the block after it. */
static caching_block *caching_unmap(caching *c, caching_block *b)
{
    caching_segment *s = b->segment;
    uint64_t page = caching_page(s), end = b->offset + b->size;
    uint64_t lo = s->base + caching_round_up(b->offset - s->base, page);
    uint64_t hi = s->base + (end - s->base) / page * page;
    if (hi <= lo)
        return b->next;
    caching_pool_remove(c, b);
    if (lo > b->offset)
        caching_pool_add(c, caching_link(s, b->prev, b->offset, lo - b->offset, true));
    if (end > hi)
        caching_pool_add(c, caching_link(s, b, hi, end - hi, true));
    b->offset = lo;
    b->size = hi - lo;
    b->mapped = false;
    s->size -= hi - lo;
    c->reserved -= hi - lo;
    if (b->next && !b->next->mapped)
        caching_merge_next(b);
    if (b->prev && !b->prev->mapped) {
        b = b->prev;
        caching_merge_next(b);
    }
    return b->next;
}

static bool caching_unmap_free(caching *c, caching_segment *s)
{
    uint64_t before = s->size;
    for (caching_block *b = s->head; b;)
        b = caching_free_mapped(b) ? caching_unmap(c, b) : b->next;
    return s->size < before;
}

/* release_cached_blocks() (empty_cache): free every cached whole segment. */
static bool caching_release_cached(caching *c)
{
    bool released = false;
    for (guint i = 0; i < c->segments->len;) {
        caching_segment *s = g_ptr_array_index(c->segments, i);
        if (s->expandable) {
            released |= caching_unmap_free(c, s);
            i++;
        } else if (s->head && !s->head->used && s->head->next == NULL) {
            caching_release_block(c, s->head);
            released = true;
        } else {
            i++;
        }
    }
    return released;
}

/* release_available_cached_blocks(): with max_split_size, free oversize
 * cached segments of the stream, the smallest that covers the request or
 * else the largest ones until enough is freed. */
static bool caching_release_available(caching *c, bool small, uint32_t stream, uint64_t size)
{
    if (c->max_split_size == UINT64_MAX || c->expandable)
        return false;
    caching_block key = {.stream = stream, .size = size > c->max_split_size ? size : c->max_split_size};
    GTreeNode *n = g_tree_lower_bound(c->pools[small], &key);
    if (n) {
        caching_block *b = g_tree_node_value(n);
        if (b->stream == stream && !b->prev && !b->next) {
            caching_release_block(c, b);
            return true;
        }
    }
    /* Largest oversize blocks of the stream first. */
    uint64_t freed = 0;
    for (;;) {
        caching_block top = {.stream = stream, .size = UINT64_MAX, .offset = UINT64_MAX};
        GTreeNode *m = g_tree_upper_bound(c->pools[small], &top);
        m = m ? g_tree_node_previous(m) : g_tree_node_last(c->pools[small]);
        if (!m)
            break;
        caching_block *b = g_tree_node_value(m);
        if (b->stream != stream || b->size < c->max_split_size || b->prev || b->next)
            break;
        freed += b->size;
        caching_release_block(c, b);
        if (freed >= size)
            break;
    }
    return freed >= size;
}

/* garbage_collect_cached_blocks(): with reserved above the threshold, free
 * whole cached large-pool blocks at least as old as the mean, until enough
 * is reclaimed or a sweep frees nothing. */
static void caching_collect(caching *c)
{
    uint64_t threshold = (uint64_t)(c->gc_threshold * (double)c->limit);
    if (c->reserved <= threshold)
        return;
    uint64_t target = c->reserved - threshold, reclaimed = 0, total_age = 0, count = 0;
    GPtrArray *whole = g_ptr_array_new();
    GTreeNode *n = g_tree_node_first(c->pools[0]);
    for (; n; n = g_tree_node_next(n)) {
        caching_block *b = g_tree_node_value(n);
        if (!b->prev && !b->next) {
            total_age += c->pool_calls[0] - b->gc_base;
            count++;
            if (!b->segment->expandable)
                g_ptr_array_add(whole, b);
        }
    }
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        double age_threshold = (double)total_age / (double)count;
        freed = false;
        for (guint i = 0; i < whole->len;) {
            caching_block *b = g_ptr_array_index(whole, i);
            uint64_t age = c->pool_calls[0] - b->gc_base;
            if ((double)age < age_threshold) {
                i++;
                continue;
            }
            freed = true;
            reclaimed += b->size;
            total_age -= age;
            count--;
            g_ptr_array_remove_index(whole, i);
            caching_release_block(c, b);
        }
    }
    g_ptr_array_free(whole, TRUE);
}

static bool caching_should_split(const caching *c, const caching_block *b, uint64_t size)
{
    uint64_t remaining = b->size - size;
    if (b->small || c->expandable)
        return remaining >= CACHING_MIN_BLOCK;
    return size < c->max_split_size && remaining > CACHING_SMALL_SIZE;
}

static bool caching_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset)
{
    caching *c = self;
    uint64_t rounded = caching_round_size(c, size);
    if (rounded == 0)
        return false;
    bool small = rounded <= CACHING_SMALL_SIZE;
    caching_block *b = caching_get_free_block(c, small, stream, rounded);
    if (!b && c->gc_threshold > 0)
        caching_collect(c);
    if (!b)
        b = caching_device_alloc(c, small, stream, rounded);
    if (!b && caching_release_available(c, small, stream, rounded))
        b = caching_device_alloc(c, small, stream, rounded);
    if (!b && caching_release_cached(c))
        b = caching_device_alloc(c, small, stream, rounded);
    if (!b)
        return false;
    if (caching_should_split(c, b, rounded)) {
        caching_pool_add(c, caching_link(b->segment, b, b->offset + rounded, b->size - rounded, true));
        b->size = rounded;
    }
    b->used = true;
    b->id = id;
    b->requested = size;
    g_hash_table_insert(c->live, &b->id, b);
    c->allocated += size;
    c->used_bytes += b->size;
    assert(caching_block_ok(c, b));                   /* tiling; a used block in no pool */
    assert(!b->next || caching_block_ok(c, b->next)); /* the split-off rest, pooled */
    assert(caching_limits_ok(c));                     /* reserved <= limit <= capacity */
    *offset = b->offset;
    return true;
}

static void caching_free(void *self, uint64_t id)
{
    caching *c = self;
    caching_block *b = g_hash_table_lookup(c->live, &id);
    if (!b)
        return;
    g_hash_table_remove(c->live, &id);
    c->allocated -= b->requested;
    c->used_bytes -= b->size;
    b->used = false;
    b->id = 0;
    b->requested = 0;
    b = caching_merge_free(c, b);
    caching_pool_add(c, b);
    assert(caching_block_ok(c, b)); /* merged with its free neighbours, pooled */
    assert(caching_limits_ok(c));
}

static void caching_release(void *self)
{
    caching_release_cached(self);
}

static void caching_stats(const void *self, strata_alloc_stats *out)
{
    const caching *c = self;
    *out = (strata_alloc_stats){0};
    out->allocated = c->allocated;
    out->reserved = c->reserved;
    out->free_in_reserved = c->reserved - c->used_bytes;
    out->internal_waste = c->used_bytes - c->allocated;
    out->n_segments = c->segments->len;
    out->address_space = c->address_space;
    GTreeNode *n = g_tree_node_last(c->all_free);
    if (n)
        out->largest_free = ((const caching_block *)g_tree_node_value(n))->size;
}

static void caching_walk(const void *self, strata_block_visit visit, void *user)
{
    const caching *c = self;
    for (guint i = 0; i < c->segments->len; i++) {
        const caching_segment *s = g_ptr_array_index(c->segments, i);
        for (const caching_block *b = s->head; b; b = b->next) {
            if (!b->mapped)
                continue; /* address space only */
            strata_block_visit_fields(visit, user, b->offset, b->size, b->used, b->id, b->requested,
                                      s->number);
        }
    }
}

const strata_alloc_type strata_alloc_caching = {
    .name = "caching",
    .summary = "PyTorch CUDA caching allocator: 512 B rounding, small/large pools per stream, "
               "2/20 MiB segments, release and retry on OOM",
    .params = caching_params,
    .create = caching_create,
    .destroy = caching_destroy,
    .alloc = caching_alloc,
    .free = caching_free,
    .release = caching_release,
    .stats = caching_stats,
    .walk = caching_walk,
    .plan = NULL,
};
