/*
 * heap.h: a flat address space of blocks, shared by the simple allocators
 * (first-fit, next-fit, best-fit).
 *
 * The heap covers [0, capacity) with blocks in address order (a doubly
 * linked list), each either used or free. Free blocks are indexed by
 * (size, offset) in a balanced tree, and optionally by offset; live blocks
 * are found by buffer id in a hash table. The allocator that owns the heap
 * decides which free block to take (its placement policy); the heap splits,
 * frees, coalesces and keeps the accounting.
 *
 * Invariants:
 *  1. the blocks tile [0, capacity) exactly, in address order;
 *  2. no two free blocks are adjacent (a free coalesces at once);
 *  3. every free block is in by_size (and by_offset when it exists), no used
 *     block is; every used block is in `live` under its id;
 *  4. used_bytes = sum of used block sizes, allocated = sum of their
 *     requested sizes; every offset and size is a multiple of alignment.
 * "Reserved" for a flat heap is the span up to the end of the highest used
 * block.
 */
#ifndef STRATA_ALLOC_HEAP_H
#define STRATA_ALLOC_HEAP_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "alloc/alloc.h"

typedef struct strata_heap_block {
    uint64_t offset, size;
    uint64_t id, requested; /* when used */
    bool used;
    struct strata_heap_block *prev, *next; /* address order */
} strata_heap_block;

typedef struct strata_heap {
    uint64_t capacity;  /* rounded down to the alignment */
    uint64_t alignment; /* power of two */
    strata_heap_block *head, *tail;
    GTree *by_size;     /* free blocks by (size, offset) */
    GTree *by_offset;   /* free blocks by offset, or NULL when not asked for */
    GHashTable *live;   /* &block->id -> block */
    uint64_t allocated, used_bytes;
} strata_heap;

/* alignment: a power of two (0 = 256). */
bool strata_heap_init(strata_heap *h, uint64_t capacity, uint64_t alignment, bool offset_index,
                      GError **err);
void strata_heap_clear(strata_heap *h);

/* Size rounded up to the alignment (0 counts as one unit). 0 on overflow. */
uint64_t strata_heap_round(const strata_heap *h, uint64_t size);
/* Smallest free block of at least `size` bytes (lowest offset among equals), or NULL. */
strata_heap_block *strata_heap_best(const strata_heap *h, uint64_t size);
/* Mark part of free block b used: [b->offset, b->offset+size); the rest stays free. */
void strata_heap_take(strata_heap *h, strata_heap_block *b, uint64_t size, uint64_t id,
                      uint64_t requested);
/* Free the block of buffer id, coalescing with free neighbours. False if unknown. */
bool strata_heap_free(strata_heap *h, uint64_t id);

void strata_heap_stats(const strata_heap *h, strata_alloc_stats *out);
void strata_heap_walk(const strata_heap *h, strata_block_visit visit, void *user);

#endif
