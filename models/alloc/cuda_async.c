/*
 * cuda_async.c: the pool behind cudaMallocAsync / cudaFreeAsync, as
 * PyTorch uses it with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync.
 *
 * What it approximates (CUDA Runtime API, "Stream Ordered Memory
 * Allocator" and cudaMemPoolAttr: cudaMemPoolAttrReleaseThreshold,
 * cudaMemPoolReuseFollowEventDependencies, cudaMemPoolReuseAllowOpportunistic;
 * c10/cuda/CUDAMallocAsyncAllocator.cpp: mallocAsync, freeAsync,
 * emptyCache):
 *  - one pool per device; a request is rounded up to the memory's alignment
 *    (256 B by default, cudaMalloc's) and PyTorch passes it to the driver
 *    unchanged;
 *  - a free returns the block to the pool, where it stays reserved. A later
 *    request takes a cached block of exactly its rounded size, the one freed
 *    last first; else the pool maps a new block of that size;
 *  - reuse across streams: a block freed on one stream (PyTorch frees on the
 *    allocation stream) is reused on the same stream at once (stream
 *    order); on another stream when reuse_allow_opportunistic is on (the
 *    free has completed: in strata a free completes when it runs), or, with
 *    reuse_follow_event_dependencies on, once that stream has waited on an
 *    event recorded after the free (cudaMemPoolReuseFollowEventDependencies).
 *    Event order is kept as vector clocks: each stream counts its frees, a
 *    block remembers its freeing stream and that count (freed_at), each
 *    stream holds the highest count of every stream it is ordered after; a
 *    record snapshots the recording stream's clock under (event, seq), a
 *    wait merges the snapshot into the waiting stream's (so the order is
 *    transitive, as the driver's is). With both attributes off a block
 *    serves its freeing stream only;
 *  - release threshold: a `release` op is a synchronization
 *    (cudaDeviceSynchronize): the pool returns cached blocks, freed earliest
 *    first, until it holds (reserves) at most release_threshold bytes or
 *    nothing cached is left. PyTorch's
 *    empty_cache synchronizes and trims the pool to 0 (cudaMemPoolTrimTo),
 *    which is release_threshold = 0, CUDA's default. Streams and events
 *    synchronized by the host otherwise are not seen;
 *  - out of memory: when mapping a new block would exceed the capacity,
 *    strata returns cached blocks, freed earliest first, until the block
 *    fits (the pool's unused memory can back a block of any size), and fails
 *    only when nothing cached is left; PyTorch's mallocAsync itself does not
 *    retry (it raises OutOfMemoryError). PyTorch sets the threshold to
 *    UINT64_MAX and enables all three reuse attributes (lazy_init_device),
 *    and frees on the allocation stream (free_impl).
 * Not modelled: the driver's suballocation of larger mapped chunks (a
 * request never takes part of a bigger cached block), its physical page
 * granularity, cudaMemPoolReuseAllowInternalDependencies, and pools shared
 * between devices or processes.
 *
 * Invariants: every cached block is in `cached`, in free order; no live
 * block is; reserved = sum of block sizes <= capacity (blockset.h); a
 * cached block's freed_at <= its stream's own entry in its stream's clock.
 * Snapshots are kept only when they can matter (events followed and
 * opportunistic reuse off), one per record, for the whole run.
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "alloc/blockset.h"
#include "core/error.h"

#define ASYNC_GRANULE (UINT64_C(2) << 20) /* address alignment of mapped blocks */

typedef struct cuda_async {
    strata_blockset set;
    uint64_t alignment, release_threshold;
    bool opportunistic, follow_events;
    GQueue cached;     /* strata_wblock *, earliest free at the head */
    GPtrArray *clocks; /* by stream: GArray of uint64 by stream (or NULL), the vector clock */
    GHashTable *records; /* async_record_key * -> GArray snapshot of the recorder's clock */
} cuda_async;

typedef struct async_record_key {
    uint32_t event;
    uint64_t seq;
} async_record_key;

static guint async_record_hash(gconstpointer k)
{
    const async_record_key *r = k;
    return (guint)(r->seq * UINT64_C(0x9E3779B97F4A7C15) >> 32) ^ r->event;
}

static gboolean async_record_equal(gconstpointer a, gconstpointer b)
{
    const async_record_key *x = a, *y = b;
    return x->event == y->event && x->seq == y->seq;
}

static void async_clock_free(gpointer p)
{
    if (p)
        g_array_free(p, TRUE);
}

static const strata_param_def cuda_async_params[] = {
    {"release_threshold", STRATA_PARAM_SIZE, "0",
     "bytes the pool keeps reserved at a release (synchronization); above it cached blocks go "
     "back to the device (cudaMemPoolAttrReleaseThreshold, default 0)", NULL},
    {"reuse_allow_opportunistic", STRATA_PARAM_BOOL, "true",
     "a block freed on one stream may serve another stream once the free has run "
     "(cudaMemPoolReuseAllowOpportunistic, enabled by default); false: only its own stream", NULL},
    {"reuse_follow_event_dependencies", STRATA_PARAM_BOOL, "true",
     "a block freed on one stream may serve another stream that has waited on an event recorded "
     "after the free (cudaMemPoolReuseFollowEventDependencies, enabled by default)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static uint64_t async_seen(const cuda_async *c, uint32_t by, uint32_t of);

#ifndef NDEBUG
/* Every cached block in `cached` through its own link, none live, each freed
 * no later than its stream's own clock entry (O(n)): for destroy. */
static bool async_ok(const cuda_async *c)
{
    for (const GList *l = c->cached.head; l; l = l->next) {
        const strata_wblock *b = l->data;
        if (b->live || b->link != l || b->freed_at > async_seen(c, b->stream, b->stream))
            return false;
    }
    return c->cached.length + g_hash_table_size(c->set.live) == (guint)g_tree_nnodes(c->set.by_offset);
}
#endif

static void *cuda_async_create(const strata_alloc_config *cfg, GError **err)
{
    (void)err;
    cuda_async *c = g_new0(cuda_async, 1);
    c->alignment = cfg->alignment ? cfg->alignment : 256;
    c->release_threshold = strata_params_size(cfg->params, "release_threshold");
    c->opportunistic = strata_params_bool(cfg->params, "reuse_allow_opportunistic");
    c->follow_events = strata_params_bool(cfg->params, "reuse_follow_event_dependencies");
    c->clocks = g_ptr_array_new_with_free_func(async_clock_free);
    c->records = g_hash_table_new_full(async_record_hash, async_record_equal, g_free, async_clock_free);
    strata_blockset_init(&c->set, cfg->capacity, ASYNC_GRANULE);
    g_queue_init(&c->cached);
    return c;
}

static void cuda_async_destroy(void *self)
{
    cuda_async *c = self;
    assert(async_ok(c)); /* cached blocks all in `cached`, none live; freed_at <= the clock */
    g_queue_clear(&c->cached);
    g_ptr_array_free(c->clocks, TRUE);
    g_hash_table_destroy(c->records);
    strata_blockset_clear(&c->set);
    g_free(c);
}

/* The clock of `stream`, made (all zero) on first use, with at least n entries. */
static GArray *async_clock(cuda_async *c, uint32_t stream, guint n)
{
    if (stream >= c->clocks->len)
        g_ptr_array_set_size(c->clocks, (guint)stream + 1);
    GArray *row = g_ptr_array_index(c->clocks, stream);
    if (row == NULL) {
        row = g_array_new(FALSE, TRUE, sizeof(uint64_t));
        g_ptr_array_index(c->clocks, stream) = row;
    }
    if (row->len < n)
        g_array_set_size(row, n);
    return row;
}

/* How many of `of`'s frees stream `by` is ordered after (0 when unknown). */
static uint64_t async_seen(const cuda_async *c, uint32_t by, uint32_t of)
{
    const GArray *row = by < c->clocks->len ? g_ptr_array_index(c->clocks, by) : NULL;
    return row && of < row->len ? g_array_index(row, uint64_t, of) : 0;
}

/* The cached block of exactly `size` bytes freed last that `stream` may reuse. */
static strata_wblock *async_find(const cuda_async *c, uint64_t size, uint32_t stream)
{
    for (GList *l = c->cached.tail; l; l = l->prev) {
        strata_wblock *b = l->data;
        if (b->size == size &&
            (c->opportunistic || b->stream == stream ||
             (c->follow_events && async_seen(c, stream, b->stream) >= b->freed_at)))
            return b;
    }
    return NULL;
}

/* Returns the earliest-freed cached block to the device; false when none. */
static bool async_trim_one(cuda_async *c)
{
    strata_wblock *b = g_queue_pop_head(&c->cached);
    if (b == NULL)
        return false;
    strata_blockset_drop(&c->set, b);
    return true;
}

static bool cuda_async_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream,
                             uint64_t *offset)
{
    cuda_async *c = self;
    uint64_t rounded = size == 0 ? c->alignment : (size + c->alignment - 1) & ~(c->alignment - 1);
    if (rounded < size)
        return false;
    strata_wblock *b = async_find(c, rounded, stream);
    if (b) {
        g_queue_unlink(&c->cached, b->link);
        g_list_free_1(b->link);
        b->link = NULL;
    }
    while (b == NULL) {
        b = strata_blockset_add(&c->set, rounded);
        if (b == NULL && !async_trim_one(c))
            return false;
    }
    assert(b->link == NULL); /* no live block is in `cached` */
    strata_blockset_use(&c->set, b, id, size, stream);
    *offset = b->offset;
    return true;
}

static void cuda_async_free(void *self, uint64_t id)
{
    cuda_async *c = self;
    strata_wblock *b = strata_blockset_unuse(&c->set, id);
    if (b == NULL)
        return;
    g_queue_push_tail(&c->cached, b);
    b->link = c->cached.tail;
    GArray *row = async_clock(c, b->stream, b->stream + 1);
    b->freed_at = ++g_array_index(row, uint64_t, b->stream);
}

/* A record snapshots the recording stream's clock; a wait merges the
 * snapshot of the record it awaited into the waiting stream's clock. */
static void cuda_async_event(void *self, bool is_record, uint32_t stream, uint32_t event, uint64_t seq)
{
    cuda_async *c = self;
    if (!c->follow_events || c->opportunistic)
        return;
    async_record_key key = {event, seq};
    if (is_record) {
        GArray *row = async_clock(c, stream, stream + 1);
        g_hash_table_replace(c->records, g_memdup2(&key, sizeof key), g_array_copy(row));
        return;
    }
    const GArray *snap = g_hash_table_lookup(c->records, &key);
    if (snap == NULL)
        return;
    GArray *row = async_clock(c, stream, snap->len);
    for (guint i = 0; i < snap->len; i++) {
        uint64_t v = g_array_index(snap, uint64_t, i);
        if (v > g_array_index(row, uint64_t, i))
            g_array_index(row, uint64_t, i) = v;
    }
}

static void cuda_async_release(void *self)
{
    cuda_async *c = self;
    while (c->set.reserved > c->release_threshold && async_trim_one(c)) {
    }
}

static void cuda_async_stats(const void *self, strata_alloc_stats *out)
{
    const cuda_async *c = self;
    uint64_t largest = 0;
    for (const GList *l = c->cached.head; l; l = l->next) {
        const strata_wblock *b = l->data;
        if (b->size > largest)
            largest = b->size;
    }
    strata_blockset_stats(&c->set, largest, out);
}

static void cuda_async_walk(const void *self, strata_block_visit visit, void *user)
{
    const cuda_async *c = self;
    strata_blockset_walk(&c->set, visit, user);
}

const strata_alloc_type strata_alloc_cuda_async = {
    .name = "cuda-async",
    .summary = "cudaMallocAsync pool: blocks cached by size, reused on their stream (another "
               "stream when opportunistic or after an event wait), trimmed to release_threshold "
               "at a release",
    .params = cuda_async_params,
    .create = cuda_async_create,
    .destroy = cuda_async_destroy,
    .alloc = cuda_async_alloc,
    .free = cuda_async_free,
    .release = cuda_async_release,
    .stats = cuda_async_stats,
    .walk = cuda_async_walk,
    .plan = NULL,
    .event = cuda_async_event,
};
