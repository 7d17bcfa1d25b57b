/*
 * blockset.h: whole blocks obtained one by one from a memory and never split
 * or merged, each either live (holding one buffer) or cached (free, kept for
 * reuse); shared by the allocators that cache whole allocations
 * (caching-host, cuda-async).
 *
 * Each block is what one call to the memory's own allocator returned
 * (cudaHostAlloc, a pool's chunk): it gets an address first-fit among the
 * blocks held, aligned to min(size, granule), inside [0, capacity) when a gap
 * is left and above the highest block otherwise (host and pool addresses are
 * virtual: only reserved bytes, not contiguity, are bounded by capacity).
 * The owner decides which cached block a request takes; the set keeps the
 * addresses and the accounting.
 *
 * Invariants: blocks never overlap; reserved = sum of block sizes <=
 * capacity; used_bytes = sum of live block sizes, allocated = sum of their
 * requested sizes; every live block is in `live` under its buffer id, no
 * cached one is.
 */
#ifndef STRATA_ALLOC_BLOCKSET_H
#define STRATA_ALLOC_BLOCKSET_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "alloc/alloc.h"

typedef struct strata_wblock {
    uint64_t offset, size;
    uint64_t id, requested; /* when live */
    uint32_t stream;        /* the stream of its last allocation */
    uint32_t number;        /* segment number, in order of creation */
    bool live;
    uint64_t freed_at;      /* owner's clock at its last free */
    GList *link;            /* owner's node in a cache list, or NULL */
} strata_wblock;

typedef struct strata_blockset {
    uint64_t capacity, granule;
    GTree *by_offset;   /* offset -> strata_wblock * (owns the blocks) */
    GHashTable *live;   /* &block->id -> block */
    uint32_t next_number;
    uint64_t allocated, used_bytes, reserved;
} strata_blockset;

void strata_blockset_init(strata_blockset *s, uint64_t capacity, uint64_t granule);
void strata_blockset_clear(strata_blockset *s);
/* A new cached block of `size` bytes, or NULL when reserved + size > capacity. */
strata_wblock *strata_blockset_add(strata_blockset *s, uint64_t size);
/* Returns a block to the memory (it must be cached). */
void strata_blockset_drop(strata_blockset *s, strata_wblock *b);
/* Makes cached block b hold buffer id (requested bytes, on stream). */
void strata_blockset_use(strata_blockset *s, strata_wblock *b, uint64_t id, uint64_t requested,
                         uint32_t stream);
/* Caches the block of buffer id and returns it; NULL when id is not live. */
strata_wblock *strata_blockset_unuse(strata_blockset *s, uint64_t id);
/* Stats with largest_free as the owner knows it. */
void strata_blockset_stats(const strata_blockset *s, uint64_t largest_free, strata_alloc_stats *out);
void strata_blockset_walk(const strata_blockset *s, strata_block_visit visit, void *user);

#endif
