/*
 * serve_pool.c: the paged KV cache, vLLM v1's block pool
 * (vllm/v1/core/block_pool.py, kv_cache_utils.py; notes/44-45/serving.md
 * section 3): the row `paged` of serve_kv.h's table.
 *
 *   - all blocks exist from the start, in a free queue in id order;
 *     allocation pops the head, a freed block goes to the tail, so the
 *     head is the least recently used; a request frees its blocks in
 *     reverse order (its tail block first, so it is evicted first);
 *   - a block handed out has ref count 1; a prefix hit on a block adds one
 *     (and takes it out of the free queue when it was there); a block
 *     whose count drops to 0 goes back to the free queue keeping its hash;
 *   - eviction is lazy: popping a free block that still has a hash drops
 *     the hash from the table;
 *   - only full blocks are hashed; block i's hash chains its parent's with
 *     the identity of its tokens (the shared prefix's, or the request's
 *     own); a lookup takes the longest run of cached blocks among the
 *     first num_tokens - 1 tokens (the last token is always recomputed);
 *   - a warm prefix (serve_stream.h) is hashed and freed at creation, as an
 *     earlier run on the same server left it;
 *   - so are prior runs (serve_prior.h), replayed request by request in
 *     the order they ran, each taking the blocks the cache already holds.
 *
 * Sliding-window layers (vLLM v1's hybrid allocator, kv_cache_utils.py
 * _get_kv_cache_groups_uniform_page_size; single_type_kv_cache_manager.py
 * SlidingWindowManager): the layers of each attention type are split into
 * groups of group_size layers (the smaller type's count, or the larger's
 * when it is under 1.5 times the smaller; the last group of a type padded),
 * and one block of the pool holds block_size tokens of one group's
 * group_size layers, so the pool has pool_bytes / (block_size x
 * bytes_per_token / layers x group_size) blocks. A request holds, for each
 * full-attention group, a block per block_size tokens of its length, and
 * for each sliding-window group the same less the blocks that
 * remove_skipped_blocks frees: before each allocation, with
 * get_num_skipped_tokens = computed - window + 1, the first
 * skipped / block_size blocks (freed last index first). So a decoding
 * request keeps min(len, window - 1 + block_size) tokens' worth, 8 or 9
 * blocks of 16 for a 128-token window; a one-chunk prefill holds all its
 * blocks until the next step. Modelled when the full-attention layers make
 * one group (gpt-oss, Gemma 2 and 3, Mistral's all-sliding); more full
 * groups are left as every layer full. With a window no prefix is found
 * cached (the hybrid coordinator's hit common to every group is left;
 * docs/serving.md).
 *
 * Invariants: every block is either in the free queue (ref 0) or held
 * (ref > 0); a hash in the table maps to a block carrying that hash; a
 * request's window blocks of indices below win_first are freed.
 */
#include <string.h>
#include "core/error.h"
#include "serve/serve_kv.h"

enum { NIL = UINT32_MAX };

typedef struct req_blocks {
    uint32_t *ids;
    uint32_t n, cap;
    uint32_t n_hashed;  /* its first n_hashed blocks carry their hash */
    uint32_t n_hits;    /* the last lookup's hits, waiting in hits */
    uint32_t *hits;
    uint32_t *win;      /* window mode: its window groups' blocks, win_groups per index */
    uint32_t win_cap;
    uint32_t win_first; /* the first index whose window blocks it holds */
    uint32_t win_n;     /* indices 0..win_n-1 allocated in the window groups (freed below win_first) */
} req_blocks;

typedef struct pool {
    strata_serve_kv_config c;
    uint32_t n_blocks;
    uint64_t block_bytes;
    uint32_t full_groups, win_groups; /* window mode: groups of each type (0, 0: every layer full) */
    uint32_t *ref, *prev, *next;
    uint64_t *hash;      /* 0: none */
    uint32_t head, tail, n_free, n_cached_free;
    GHashTable *table;   /* hash -> block + 1 */
    req_blocks *req;
} pool;

/* vLLM's groups of c's layers (the header above): false when every layer is
 * full, or when the full layers would make more than one group (left). */
static bool window_groups(const strata_serve_kv_config *c, uint32_t *group_size, uint32_t *full_groups,
                          uint32_t *win_groups)
{
    uint32_t win = c->window_layers, full = c->layers - (win < c->layers ? win : c->layers);
    if (!c->window || !win || win > c->layers)
        return false;
    uint32_t lo = full && full < win ? full : win, hi = full > win ? full : win;
    uint32_t gs = 2 * (uint64_t)hi < 3 * (uint64_t)lo ? hi : lo;
    *group_size = gs;
    *full_groups = (full + gs - 1) / gs;
    *win_groups = (win + gs - 1) / gs;
    return *full_groups <= 1;
}

/* Bytes of one block: block_size tokens of every layer, or of one group's. */
static uint64_t pool_block_bytes(const strata_serve_kv_config *c)
{
    uint32_t gs = 0, fg = 0, wg = 0;
    if (window_groups(c, &gs, &fg, &wg))
        return (uint64_t)c->block_size * (c->bytes_per_token / c->layers) * gs;
    return (uint64_t)c->block_size * c->bytes_per_token;
}

bool strata_serve_pool_windowed(const strata_serve_kv_config *c)
{
    uint32_t gs = 0, fg = 0, wg = 0;
    return window_groups(c, &gs, &fg, &wg);
}

uint64_t strata_serve_pool_blocks(const strata_serve_kv_config *c)
{
    uint64_t b = pool_block_bytes(c);
    return b ? c->pool_bytes / b : 0;
}

static void queue_remove(pool *p, uint32_t b)
{
    if (p->prev[b] != NIL)
        p->next[p->prev[b]] = p->next[b];
    else
        p->head = p->next[b];
    if (p->next[b] != NIL)
        p->prev[p->next[b]] = p->prev[b];
    else
        p->tail = p->prev[b];
    p->prev[b] = p->next[b] = NIL;
    p->n_free--;
    if (p->hash[b])
        p->n_cached_free--;
}

static void queue_append(pool *p, uint32_t b)
{
    p->prev[b] = p->tail;
    p->next[b] = NIL;
    if (p->tail != NIL)
        p->next[p->tail] = b;
    else
        p->head = b;
    p->tail = b;
    p->n_free++;
    if (p->hash[b])
        p->n_cached_free++;
}

static void warm(pool *p);
static void replay_prior(pool *p);

static void *pool_create(const strata_serve_kv_config *c, GError **err)
{
    uint64_t n = strata_serve_pool_blocks(c);
    if (n == 0 || n >= NIL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "the KV pool (%" G_GUINT64_FORMAT " B) holds %s blocks "
                    "of %u tokens: expected 1 to 2^32-2", c->pool_bytes, n ? "too many" : "no", c->block_size);
        return NULL;
    }
    pool *p = g_new0(pool, 1);
    p->c = *c;
    p->n_blocks = (uint32_t)n;
    p->block_bytes = pool_block_bytes(c);
    uint32_t gs = 0;
    if (!window_groups(c, &gs, &p->full_groups, &p->win_groups))
        p->full_groups = p->win_groups = 0;
    p->ref = g_new0(uint32_t, n);
    p->prev = g_new(uint32_t, n);
    p->next = g_new(uint32_t, n);
    p->hash = g_new0(uint64_t, n);
    p->head = p->tail = NIL;
    for (uint32_t b = 0; b < n; b++)
        queue_append(p, b);
    p->table = g_hash_table_new(g_direct_hash, g_direct_equal);
    p->req = g_new0(req_blocks, c->n_requests ? c->n_requests : 1);
    warm(p);
    replay_prior(p);
    return p;
}

static void pool_destroy(void *s)
{
    pool *p = s;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->c.n_requests; i++)
        g_free(p->req[i].ids), g_free(p->req[i].hits), g_free(p->req[i].win);
    g_free(p->req);
    g_hash_table_destroy(p->table);
    g_free(p->ref);
    g_free(p->prev);
    g_free(p->next);
    g_free(p->hash);
    g_free(p);
}

/* splitmix64's finaliser over parent and key: never 0. */
static uint64_t chain(uint64_t parent, uint64_t key)
{
    uint64_t z = parent * 0x9E3779B97F4A7C15ull + key + 0x632BE59BD9B4E5Full;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
}

/* Block i's hash given its parent's: its tokens are the shared prefix's
 * when the block lies inside it, else request id's own. With prior runs
 * (serve_prior.h) a block of request id's prompt of `prompt` tokens is its
 * own at any length only wholly before the prompt's last token; the block
 * holding that token is the prompt length's, and a generated block is run
 * `run`'s (0: this one, k: the k-th prior run). */
static uint64_t block_hash(const pool *p, uint64_t parent, uint32_t id, uint32_t i, uint32_t prompt, uint32_t run)
{
    bool shared = (uint64_t)(i + 1) * p->c.block_size <= p->c.shared_prefix;
    uint64_t h = chain(parent, ((uint64_t)(shared ? UINT32_MAX : id) << 32) | i);
    if (shared || !p->c.n_prior)
        return h;
    switch (strata_serve_prior_block(i, p->c.block_size, prompt)) {
    case STRATA_SERVE_BLOCK_CUT:
        return chain(h, (1ull << 63) | prompt);
    case STRATA_SERVE_BLOCK_OUTPUT:
        return chain(h, (1ull << 62) | run);
    default:
        return h;
    }
}

static uint32_t pool_lookup(void *s, const strata_serve_kv_req *r, uint32_t num_tokens)
{
    pool *p = s;
    req_blocks *q = &p->req[r->id];
    q->n_hits = 0;
    if (!p->c.prefix_caching || p->win_groups || q->n || num_tokens < 2)
        return 0;
    uint32_t max = (num_tokens - 1) / p->c.block_size;
    if (!q->hits)
        q->hits = g_new(uint32_t, max ? max : 1);
    else
        q->hits = g_renew(uint32_t, q->hits, max ? max : 1);
    uint64_t h = 0;
    for (uint32_t i = 0; i < max; i++) {
        h = block_hash(p, h, r->id, i, r->prompt, 0);
        gpointer v = g_hash_table_lookup(p->table, (gpointer)(uintptr_t)h);
        if (!v)
            break;
        q->hits[q->n_hits++] = (uint32_t)((uintptr_t)v - 1);
    }
    return q->n_hits * p->c.block_size;
}

static void push_block(req_blocks *q, uint32_t b)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->ids = g_renew(uint32_t, q->ids, q->cap);
    }
    q->ids[q->n++] = b;
}

static uint32_t pop_free(pool *p)
{
    uint32_t b = p->head;
    queue_remove(p, b);
    if (p->hash[b]) {
        gpointer key = (gpointer)(uintptr_t)p->hash[b];
        if ((uintptr_t)g_hash_table_lookup(p->table, key) == (uintptr_t)b + 1)
            g_hash_table_remove(p->table, key);
        p->hash[b] = 0;
    }
    return b;
}

/* Gives block b, when it has no hash yet, the hash h, and registers it in
 * the table unless a block there carries h already: the table keeps the
 * first. Such a duplicate keeps h when keep_duplicate (a request's block,
 * computed beside the cached one: hash_full), or stays hashless (the warm
 * prefix's: the earlier run would have found the cached block instead). */
static void hash_block(pool *p, uint32_t b, uint64_t h, bool keep_duplicate)
{
    gpointer key = (gpointer)(uintptr_t)h;
    if (p->hash[b])
        return;
    bool cached = g_hash_table_contains(p->table, key);
    if (cached && !keep_duplicate)
        return;
    p->hash[b] = h;
    if (!cached)
        g_hash_table_insert(p->table, key, (gpointer)(uintptr_t)(b + 1));
}

/* The warm prefix (serve_stream.h): an earlier run on the same server
 * computed request i's first warm_prefix tokens and freed them, so their
 * full blocks wait in the free queue with their hashes, behind the blocks
 * never used (vLLM's free queue: freed blocks at the tail, a request's in
 * reverse order, block_pool.py free_blocks). Request by request in id
 * order; popping a cached block evicts it (lazy eviction), so a pool too
 * small for them all keeps the latest, as vLLM's LRU does. Nothing with
 * prefix caching off or with window groups (no hit is looked up there). */
static void warm(pool *p)
{
    uint32_t per = p->c.warm_prefix / p->c.block_size;
    if (!p->c.prefix_caching || p->win_groups || per == 0)
        return;
    per = per < p->n_blocks ? per : p->n_blocks;
    uint32_t *ids = g_new(uint32_t, per);
    for (uint32_t id = 0; id < p->c.n_requests; id++) {
        uint64_t h = 0;
        for (uint32_t i = 0; i < per; i++) {
            ids[i] = pop_free(p);
            h = block_hash(p, h, id, i, UINT32_MAX, 0);
            hash_block(p, ids[i], h, false);
        }
        for (uint32_t i = per; i-- > 0;)
            queue_append(p, ids[i]);
    }
    g_free(ids);
}

/* Prior run `run` (1 for the first) request id of `prompt` tokens that
 * generated `output` (serve_prior.h): as vLLM ran it, its longest run of
 * cached blocks taken (a block found is taken out of the free queue; the
 * lookup's cap at num_tokens - 1 is left: its prompt's last block is the
 * length's own, found only by a run of that length), the rest popped from
 * the head (evicting what they held), the full blocks of its prompt + output
 * - 1 computed tokens (the last sampled token is never written) hashed, then
 * all freed tail first. The run's requests in id order, one at a time (a
 * closed loop at fixed lengths finishes them in the order it sent them; ids
 * are the dataset's order, benchmark_serving sends them unshuffled). */
static void replay(pool *p, uint32_t run, uint32_t id, uint32_t prompt, uint32_t output, uint32_t *ids)
{
    uint64_t tokens = (uint64_t)prompt + output - 1, h = 0;
    uint64_t need = (tokens + p->c.block_size - 1) / p->c.block_size, full = tokens / p->c.block_size;
    uint32_t n = 0;
    bool found = true;
    for (uint32_t i = 0; i < need; i++) {
        if (i < full)
            h = block_hash(p, h, id, i, prompt, run);
        gpointer v = found && i < full ? g_hash_table_lookup(p->table, (gpointer)(uintptr_t)h) : NULL;
        found = v != NULL;
        uint32_t b = found ? (uint32_t)((uintptr_t)v - 1) : NIL;
        if (found && p->ref[b] == 0)
            queue_remove(p, b);
        if (!found && !p->n_free)
            break;
        if (!found) {
            b = pop_free(p);
            if (i < full)
                hash_block(p, b, h, true);
        }
        p->ref[b]++;
        ids[n++] = b;
    }
    while (n-- > 0)
        if (--p->ref[ids[n]] == 0)
            queue_append(p, ids[n]);
}

/* The prior runs in the order they ran (prefix caching on, no window groups). */
static void replay_prior(pool *p)
{
    if (!p->c.prefix_caching || p->win_groups || !p->c.n_prior)
        return;
    uint64_t most = 0;
    for (uint32_t k = 0; k < p->c.n_prior; k++) {
        uint64_t t = (uint64_t)p->c.prior[k].prompt + p->c.prior[k].output;
        most = t > most ? t : most;
    }
    uint64_t cap = most / p->c.block_size + 1;
    uint32_t *ids = g_new(uint32_t, cap < p->n_blocks ? cap : p->n_blocks);
    for (uint32_t k = 0; k < p->c.n_prior; k++)
        for (uint32_t id = 0; id < p->c.prior[k].n; id++)
            replay(p, k + 1, id, p->c.prior[k].prompt, p->c.prior[k].output, ids);
    g_free(ids);
}

/* Hashes r's blocks that `tokens` fill, from the first unhashed one. */
static void hash_full(pool *p, req_blocks *q, uint32_t id, uint32_t prompt, uint32_t tokens)
{
    uint32_t full = tokens / p->c.block_size;
    if (!p->c.prefix_caching)
        return;
    uint64_t h = q->n_hashed ? p->hash[q->ids[q->n_hashed - 1]] : 0;
    for (uint32_t i = q->n_hashed; i < full && i < q->n; i++) {
        h = block_hash(p, h, id, i, prompt, 0);
        hash_block(p, q->ids[i], h, true);
        q->n_hashed = i + 1;
    }
}

/* remove_skipped_blocks: frees q's window blocks of the indices wholly
 * before computed - window + 1, the last index first. */
static void free_skipped(pool *p, req_blocks *q, uint32_t computed)
{
    if (computed < p->c.window)
        return;
    uint32_t skipped = (computed - p->c.window + 1) / p->c.block_size;
    if (skipped > q->win_n)
        skipped = q->win_n;
    for (uint32_t i = skipped; i-- > q->win_first;)
        for (uint32_t g = p->win_groups; g-- > 0;) {
            uint32_t b = q->win[(size_t)i * p->win_groups + g];
            if (--p->ref[b] == 0)
                queue_append(p, b);
        }
    if (skipped > q->win_first)
        q->win_first = skipped;
}

/* Window mode: the full groups' blocks (at most one group) and the window
 * groups' up to `need` indices, or false with nothing taken. */
static bool window_grow(pool *p, req_blocks *q, uint32_t need)
{
    uint32_t fresh_full = p->full_groups && need > q->n ? need - q->n : 0;
    uint32_t fresh_win = need > q->win_n ? need - q->win_n : 0;
    if ((uint64_t)fresh_full + (uint64_t)fresh_win * p->win_groups > p->n_free)
        return false;
    for (uint32_t i = 0; i < fresh_full; i++) {
        uint32_t b = pop_free(p);
        p->ref[b] = 1;
        push_block(q, b);
    }
    if ((size_t)need * p->win_groups > q->win_cap) {
        q->win_cap = (uint32_t)((size_t)need * p->win_groups * 2);
        q->win = g_renew(uint32_t, q->win, q->win_cap);
    }
    for (uint32_t i = q->win_n; i < need; i++)
        for (uint32_t g = 0; g < p->win_groups; g++) {
            uint32_t b = pop_free(p);
            p->ref[b] = 1;
            q->win[(size_t)i * p->win_groups + g] = b;
        }
    if (need > q->win_n)
        q->win_n = need;
    return true;
}

static bool pool_grow(void *s, const strata_serve_kv_req *r, uint32_t tokens)
{
    pool *p = s;
    req_blocks *q = &p->req[r->id];
    if (p->win_groups) {
        free_skipped(p, q, r->computed);
        return window_grow(p, q, (tokens + p->c.block_size - 1) / p->c.block_size);
    }
    uint32_t need = (tokens + p->c.block_size - 1) / p->c.block_size;
    uint32_t hits = q->n ? 0 : q->n_hits;
    uint32_t hits_free = 0;
    for (uint32_t i = 0; i < hits; i++)
        hits_free += p->ref[q->hits[i]] == 0;
    uint32_t have = q->n + hits;
    uint32_t fresh = need > have ? need - have : 0;
    if ((uint64_t)fresh + hits_free > p->n_free)
        return false;
    for (uint32_t i = 0; i < hits; i++) {
        uint32_t b = q->hits[i];
        if (p->ref[b]++ == 0)
            queue_remove(p, b);
        push_block(q, b);
    }
    q->n_hashed = q->n_hashed > hits ? q->n_hashed : hits;
    q->n_hits = 0;
    for (uint32_t i = 0; i < fresh; i++) {
        uint32_t b = pop_free(p);
        p->ref[b] = 1;
        push_block(q, b);
    }
    hash_full(p, q, r->id, r->prompt, tokens);
    return true;
}

static void pool_release(void *s, uint32_t id)
{
    pool *p = s;
    req_blocks *q = &p->req[id];
    for (uint32_t i = q->n; i-- > 0;) {
        uint32_t b = q->ids[i];
        if (--p->ref[b] == 0)
            queue_append(p, b);
    }
    /* the coordinator frees group by group, each in reverse order */
    for (uint32_t i = q->win_n; i-- > q->win_first;)
        for (uint32_t g = p->win_groups; g-- > 0;) {
            uint32_t b = q->win[(size_t)i * p->win_groups + g];
            if (--p->ref[b] == 0)
                queue_append(p, b);
        }
    q->n = q->n_hashed = q->n_hits = 0;
    q->win_first = q->win_n = 0;
}

static uint64_t pool_held(const void *s, uint32_t id)
{
    const pool *p = s;
    const req_blocks *q = &p->req[id];
    return ((uint64_t)q->n + (uint64_t)(q->win_n - q->win_first) * p->win_groups) * p->block_bytes;
}

static void pool_stats(const void *s, strata_serve_kv_stats *out)
{
    const pool *p = s;
    out->capacity = (uint64_t)p->n_blocks * p->block_bytes;
    out->reserved = (uint64_t)(p->n_blocks - p->n_free) * p->block_bytes;
    out->largest_free = (uint64_t)p->n_free * p->block_bytes;
    out->cached = (uint64_t)p->n_cached_free * p->block_bytes;
}

const strata_serve_kv_scheme strata_serve_kv_paged = {
    "paged", "vLLM's block pool: blocks of block_size tokens, prefix cache by block hash, LRU eviction",
    pool_create, pool_destroy, pool_lookup, pool_grow, pool_release, pool_held, pool_stats,
};
