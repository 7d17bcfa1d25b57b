/*
 * timeline_live.h: the buffers a timeline holds between their alloc sample
 * and their free sample (timeline.c pairs the two into a lifetime), by key
 * (strata_tl_live_key: memory << 48 ^ buffer id). Internal to sim/results.
 *
 * Design: the buffers lie in one array of slots, reused through a free
 * list kept in the free slots themselves (a slot is a buffer's 40 bytes);
 * an index of 4 bytes a bucket (slot + 1, 0: empty) finds a key's
 * slot by open addressing with linear probing, Fibonacci hashing of the
 * key and removal by backward shift, comparing the key of the slot it
 * points at. A run holds hundreds of thousands of live buffers at once:
 * an index of (key, pointer) pairs (core/idmap.h) costs four times the
 * memory, which was most of what a timeline adds to a run's peak.
 *
 * Invariants:
 *  1. the index's capacity is a power of two, at least 16, and holds at
 *     most half as many keys;
 *  2. every key held lies on the probe run from its home bucket, with no
 *     empty bucket between;
 *  3. a key is held at most once: putting a key held drops the buffer it
 *     had (its slot goes back to the free list);
 *  4. memory is bounded by the most buffers live at once.
 */
#ifndef STRATA_TIMELINE_LIVE_H
#define STRATA_TIMELINE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "results/timeline_writer.h"

typedef struct strata_tl_live strata_tl_live;

strata_tl_live *strata_tl_live_new(void);
void strata_tl_live_free(strata_tl_live *l);

/* The key of buffer id of memory (ids at or above 2^48 may share a key:
 * the timeline then takes them for one buffer). */
static inline uint64_t strata_tl_live_key(uint32_t memory, uint64_t id)
{
    return ((uint64_t)memory << 48) ^ id;
}

/* Holds a copy of b under its key (invariant 3). */
void strata_tl_live_put(strata_tl_live *l, const strata_tl_buffer *b);
/* Takes the buffer held under key out into *out: false when none. */
bool strata_tl_live_take(strata_tl_live *l, uint64_t key, strata_tl_buffer *out);
bool strata_tl_live_has(const strata_tl_live *l, uint64_t key);
size_t strata_tl_live_count(const strata_tl_live *l);

#endif
