/*
 * caching_host.c: PyTorch's caching allocator for pinned host memory
 * (CachingHostAllocatorImpl, used for tensors made with pin_memory() and the
 * host side of non_blocking copies).
 *
 * Design, following aten/src/ATen/core/CachingHostAllocator.h (allocate,
 * free, get_free_block, empty_cache) and
 * aten/src/ATen/cuda/CachingHostAllocator.cpp (the CUDA specialisation,
 * where each new block is one cudaHostAlloc, or cudaHostRegister of a
 * malloc'ed range, of exactly the rounded size):
 *  - a request is rounded up to the next power of two
 *    (c10::llvm::PowerOf2Ceil); strata serves a 0-byte request with a
 *    1-byte block (PyTorch returns no block at all);
 *  - the free list has one LIFO list per rounded size (free_list_ indexed
 *    by size_index = log2): a request takes the block freed last of exactly
 *    its rounded size, or else a new block of the rounded size is obtained
 *    from the memory, so reserved grows by the rounded size;
 *  - blocks are never split and never merged;
 *  - a freed block goes back to its list. PyTorch holds it back until the
 *    events recorded on the streams that used it (record_event) complete;
 *    strata frees it at the trace's free, i.e. it assumes the copies that
 *    used the block completed before the free (the trace's order);
 *  - any stream may reuse any cached block (the lists are not per stream);
 *  - release (empty_cache) returns every cached block to the memory;
 *  - the memory refuses a new block when reserved + rounded size exceeds
 *    the capacity; PyTorch then fails (no release and retry), and so does
 *    strata.
 *
 * Invariants: every cached block is in exactly one list, the list of its
 * size; no live block is in a list; every block size is a power of two;
 * reserved = sum of block sizes <= capacity (blockset.h).
 */
#include <assert.h>
#include "alloc/alloc.h"
#include "alloc/blockset.h"

#define HOST_GRANULE 4096u /* cudaHostAlloc returns page-aligned memory */

typedef struct caching_host {
    strata_blockset set;
    GTree *lists; /* rounded size -> GQueue of cached blocks, LIFO; no empty queue */
} caching_host;

static const strata_param_def caching_host_params[] = {
    {NULL, 0, NULL, NULL, NULL},
};

static gint host_cmp_size(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

static void host_queue_free(gpointer q)
{
    g_queue_free(q);
}

#ifndef NDEBUG
static bool host_power_of_two(uint64_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

typedef struct host_check {
    uint64_t cached;
    bool ok;
} host_check;

static gboolean host_check_list(gpointer key, gpointer value, gpointer user)
{
    host_check *c = user;
    const GQueue *q = value;
    c->ok = c->ok && q->length > 0;
    for (const GList *l = q->head; c->ok && l; l = l->next) {
        const strata_wblock *b = l->data;
        c->ok = !b->live && b->size == GPOINTER_TO_SIZE(key) && host_power_of_two(b->size);
        c->cached++;
    }
    return !c->ok;
}

/* Every cached block in the list of its size, once; none live (O(n)): for
 * destroy. Each block is in the set once, so counts tell "exactly one". */
static bool host_ok(const caching_host *h)
{
    host_check c = {.ok = true};
    g_tree_foreach(h->lists, host_check_list, &c);
    return c.ok && c.cached + g_hash_table_size(h->set.live) == (uint64_t)g_tree_nnodes(h->set.by_offset);
}
#endif

static void *caching_host_create(const strata_alloc_config *cfg, GError **err)
{
    (void)err;
    caching_host *h = g_new0(caching_host, 1);
    strata_blockset_init(&h->set, cfg->capacity, HOST_GRANULE);
    h->lists = g_tree_new_full(host_cmp_size, NULL, NULL, host_queue_free);
    return h;
}

static void caching_host_destroy(void *self)
{
    caching_host *h = self;
    assert(host_ok(h)); /* every cached block in exactly one list, of its size; none live */
    g_tree_destroy(h->lists);
    strata_blockset_clear(&h->set);
    g_free(h);
}

/* PowerOf2Ceil: the smallest power of two >= size (1 for 0); 0 on overflow. */
static uint64_t host_round(uint64_t size)
{
    if (size <= 1)
        return 1;
    if (size > (UINT64_C(1) << 63))
        return 0;
    return UINT64_C(1) << (64 - __builtin_clzll(size - 1));
}

static strata_wblock *host_take_cached(caching_host *h, uint64_t size)
{
    GQueue *q = g_tree_lookup(h->lists, GSIZE_TO_POINTER((gsize)size));
    if (q == NULL)
        return NULL;
    strata_wblock *b = g_queue_pop_tail(q);
    if (g_queue_is_empty(q))
        g_tree_remove(h->lists, GSIZE_TO_POINTER((gsize)size));
    return b;
}

static bool caching_host_alloc(void *self, uint64_t id, uint64_t size, uint32_t stream,
                               uint64_t *offset)
{
    caching_host *h = self;
    uint64_t rounded = host_round(size);
    if (rounded == 0)
        return false;
    strata_wblock *b = host_take_cached(h, rounded);
    if (b == NULL)
        b = strata_blockset_add(&h->set, rounded);
    if (b == NULL)
        return false;
    assert(b->size == rounded && host_power_of_two(b->size)); /* sizes are powers of two */
    strata_blockset_use(&h->set, b, id, size, stream);
    *offset = b->offset;
    return true;
}

static void caching_host_free(void *self, uint64_t id)
{
    caching_host *h = self;
    strata_wblock *b = strata_blockset_unuse(&h->set, id);
    if (b == NULL)
        return;
    GQueue *q = g_tree_lookup(h->lists, GSIZE_TO_POINTER((gsize)b->size));
    if (q == NULL) {
        q = g_queue_new();
        g_tree_insert(h->lists, GSIZE_TO_POINTER((gsize)b->size), q);
    }
    g_queue_push_tail(q, b);
}

static gboolean host_drop_list(gpointer key, gpointer value, gpointer user)
{
    (void)key;
    caching_host *h = user;
    for (GList *l = ((GQueue *)value)->head; l; l = l->next)
        strata_blockset_drop(&h->set, l->data);
    return FALSE;
}

static void caching_host_release(void *self)
{
    caching_host *h = self;
    g_tree_foreach(h->lists, host_drop_list, h);
    g_tree_destroy(h->lists);
    h->lists = g_tree_new_full(host_cmp_size, NULL, NULL, host_queue_free);
}

static void caching_host_stats(const void *self, strata_alloc_stats *out)
{
    const caching_host *h = self;
    GTreeNode *last = g_tree_node_last(h->lists);
    uint64_t largest = last ? GPOINTER_TO_SIZE(g_tree_node_key(last)) : 0;
    strata_blockset_stats(&h->set, largest, out);
}

static void caching_host_walk(const void *self, strata_block_visit visit, void *user)
{
    const caching_host *h = self;
    strata_blockset_walk(&h->set, visit, user);
}

const strata_alloc_type strata_alloc_caching_host = {
    .name = "caching-host",
    .summary = "PyTorch pinned host memory allocator: power-of-two blocks, cached per size, "
               "never split; release frees the cached blocks",
    .params = caching_host_params,
    .create = caching_host_create,
    .destroy = caching_host_destroy,
    .alloc = caching_host_alloc,
    .free = caching_host_free,
    .release = caching_host_release,
    .stats = caching_host_stats,
    .walk = caching_host_walk,
    .plan = NULL,
};
