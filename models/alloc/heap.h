/*
 * heap.h: a flat address space of blocks, shared by the simple allocators
 * (first-fit, next-fit, best-fit).
 *
 * The heap covers [0, capacity) with blocks in address order (a doubly
 * linked list), each either used or free. Free blocks are indexed in an
 * intrusive tree (blocktree.h) chosen by the owner: by (size, offset) for
 * best-fit, by offset (each subtree knowing its largest block) for
 * first-fit and next-fit, so every placement is O(log n). Live blocks are
 * found by buffer id in an idmap; block structs are recycled, so a steady
 * state allocates nothing. The allocator that owns the heap decides which
 * free block to take (its placement policy); the heap splits, frees,
 * coalesces and keeps the accounting.
 *
 * Invariants:
 *  1. the blocks tile [0, capacity) exactly, in address order;
 *  2. no two free blocks are adjacent (a free coalesces at once);
 *  3. every free block is in `free_blocks` keyed as the index says, no used
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
#include "alloc/blocktree.h"
#include "core/idmap.h"

typedef struct strata_heap_block {
    uint64_t offset, size;
    uint64_t id, requested; /* when used */
    bool used;
    struct strata_heap_block *prev, *next; /* address order; next links spare blocks */
    strata_tnode node;                     /* in free_blocks while free */
} strata_heap_block;

/* How the free blocks are indexed: the owner's placement query. */
typedef enum { STRATA_HEAP_BY_SIZE, STRATA_HEAP_BY_OFFSET } strata_heap_index;

typedef struct strata_heap {
    uint64_t capacity;  /* rounded down to the alignment */
    uint64_t alignment; /* power of two */
    strata_heap_block *head, *tail;
    strata_heap_index index;
    strata_blocktree free_blocks; /* keyed by (size, offset) or (offset, 0); value: size */
    strata_idmap *live;           /* buffer id -> used block */
    strata_heap_block *spare;     /* recycled block structs, linked by next */
    uint64_t allocated, used_bytes;
} strata_heap;

/* alignment: a power of two (0 = 256). */
bool strata_heap_init(strata_heap *h, uint64_t capacity, uint64_t alignment, strata_heap_index index,
                      GError **err);
void strata_heap_clear(strata_heap *h);

/* Size rounded up to the alignment (0 counts as one unit). 0 on overflow. */
uint64_t strata_heap_round(const strata_heap *h, uint64_t size);
/* BY_SIZE: smallest free block of at least `size` bytes (lowest offset among equals), or NULL. */
strata_heap_block *strata_heap_best(const strata_heap *h, uint64_t size);
/* BY_OFFSET: lowest-addressed free block of at least `size` bytes that
 * starts at or above `from`, or NULL. */
strata_heap_block *strata_heap_first_from(const strata_heap *h, uint64_t from, uint64_t size);
/* BY_OFFSET: the free block holding address `at`, or NULL. */
strata_heap_block *strata_heap_free_at(const strata_heap *h, uint64_t at);
/* Marks part of free block b used: [b->offset, b->offset+size); the rest
 * stays free. Returns the used block (b itself only on an exact fit). */
strata_heap_block *strata_heap_take(strata_heap *h, strata_heap_block *b, uint64_t size, uint64_t id,
                                    uint64_t requested);
/* Free the block of buffer id, coalescing with free neighbours. False if unknown. */
bool strata_heap_free(strata_heap *h, uint64_t id);

void strata_heap_stats(const strata_heap *h, strata_alloc_stats *out);
void strata_heap_walk(const strata_heap *h, strata_block_visit visit, void *user);

#endif
