/*
 * serve_kv.h: the table of KV-cache allocation schemes a serving run can
 * hold its requests' KV caches in, looked up by name (--kv NAME, or
 * --kv all for every row on the same stream).
 *
 * A row says how a request's cache takes memory from the pool (bytes of
 * one rank's HBM after weights and activations):
 *   paged              vLLM's block pool (serve_pool.c): blocks of
 *                      block_size tokens, taken as a request grows; full
 *                      blocks hashed for prefix caching, ref-counted,
 *                      evicted lazily in LRU order;
 *   contiguous-max     Orca (Max): one contiguous reservation of
 *                      max_model_len tokens per request, from an allocator
 *                      of models/alloc (best-fit unless --kv-allocator);
 *   contiguous-pow2    Orca (Pow2): prompt + output rounded up to a power
 *                      of two (at most max_model_len);
 *   contiguous-oracle  Orca (Oracle): exactly prompt + output;
 *   vattention         virtual memory growth (vAttention): a request's
 *                      K and V of each layer are contiguous in virtual
 *                      memory and grow by physical pages of page_size
 *                      (2 MiB with stock drivers), one page per tensor
 *                      at a time: 2 x layers pages (MLA: layers);
 *   expandable         PyTorch expandable segments: a request's whole
 *                      cache grows by pages of 20 MiB (the large pool's
 *                      segment page).
 * (notes/44-45/serving.md section 4: the vLLM paper's baselines, the
 * vAttention README, CUDACachingAllocator.cpp.)
 *
 * Adding a scheme is one row (a create/grow/release/held/stats set) and
 * its line in serve_kv.c's table; docs/extending.md.
 *
 * Invariants: grow either makes room for all the tokens asked or changes
 * nothing (but paged with a window frees first, as vLLM's allocate_slots
 * calls remove_skipped_blocks before it counts, the blocks wholly outside
 * the window of r->computed); release returns all a request holds; stats.reserved is the sum
 * of held over live requests, at most stats.capacity (shared prefix blocks
 * count once there, once per holder in held).
 */
#ifndef STRATA_SERVE_KV_H
#define STRATA_SERVE_KV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "serve/serve_prior.h"

typedef struct strata_serve_kv_config {
    uint64_t pool_bytes;      /* one rank's KV memory */
    uint64_t bytes_per_token; /* one rank's KV bytes per token */
    uint32_t block_size;      /* paged: tokens per block */
    uint32_t max_model_len;
    uint32_t n_requests;      /* request ids are 0..n_requests-1 */
    bool prefix_caching;      /* paged */
    uint32_t shared_prefix;   /* tokens every prompt shares (prefix hashes) */
    uint32_t warm_prefix;     /* paged: request i's first tokens cached (freed) before the run */
    uint32_t kv_tensors;      /* vattention: tensors that grow per request (2 x layers; MLA layers) */
    uint64_t page_bytes;      /* vattention, expandable: 0 for the row's own */
    const char *allocator;    /* contiguous: models/alloc spec (NULL: best-fit) */
    /* paged, vLLM v1's hybrid allocator: of `layers`, `window_layers` attend
     * to a causal sliding window of `window` tokens (0: every layer full) */
    uint32_t layers, window_layers, window;
    /* paged: the runs before this one on the same server, in order (serve_prior.h), whose blocks wait freed */
    const strata_serve_prior_run *prior;
    uint32_t n_prior;
} strata_serve_kv_config;

/* What a scheme knows of a request. */
typedef struct strata_serve_kv_req {
    uint32_t id, prompt, output;
    uint32_t computed; /* tokens whose KV is written (vLLM's num_computed_tokens) */
} strata_serve_kv_req;

typedef struct strata_serve_kv_stats {
    uint64_t capacity;      /* bytes the scheme may hand out */
    uint64_t reserved;      /* bytes held for live requests */
    uint64_t largest_free;  /* largest reservation that would fit now */
    uint64_t cached;        /* paged: bytes of free blocks that still hold a prefix */
} strata_serve_kv_stats;

typedef struct strata_serve_kv_scheme {
    const char *name;
    const char *summary;
    void *(*create)(const strata_serve_kv_config *c, GError **err);
    void (*destroy)(void *s);
    /* Tokens of r's first num_tokens found cached (NULL: none); remembered
     * for r's next grow when r holds nothing. */
    uint32_t (*lookup)(void *s, const strata_serve_kv_req *r, uint32_t num_tokens);
    bool (*grow)(void *s, const strata_serve_kv_req *r, uint32_t tokens);
    void (*release)(void *s, uint32_t id);
    uint64_t (*held)(const void *s, uint32_t id);
    void (*stats)(const void *s, strata_serve_kv_stats *out);
} strata_serve_kv_scheme;

/* The rows: i from 0 until NULL; by name, or NULL. */
const strata_serve_kv_scheme *strata_serve_kv_at(uint32_t i);
const strata_serve_kv_scheme *strata_serve_kv_find(const char *name);
char *strata_serve_kv_names(void); /* g_free */

/* The paged row (serve_pool.c), and the block pool's count for tests:
 * pool_bytes / (block_size x bytes_per_token), or with a window
 * pool_bytes / (block_size x bytes_per_token / layers x group_size)
 * (serve_pool.c: one block holds group_size layers' pages). */
extern const strata_serve_kv_scheme strata_serve_kv_paged;
uint64_t strata_serve_pool_blocks(const strata_serve_kv_config *c);
/* Whether the paged row frees c's sliding-window layers' blocks (a window,
 * and the full-attention layers in at most one of vLLM's groups). */
bool strata_serve_pool_windowed(const strata_serve_kv_config *c);

#endif
