/*
 * timeline_live.h: the buffers a timeline holds between their alloc sample
 * and their free sample (timeline.c pairs the two into a lifetime), by key
 * (strata_tl_live_key: memory << 48 ^ buffer id). Internal to sim/results.
 *
 * Design: the buffers lie in one array of slots, reused through a free
 * list kept in the free slots themselves (a slot is a buffer's 40 bytes).
 * Two indexes of 4-byte slot numbers (slot + 1, 0: none) find a key's
 * slot, each checked against the key of the slot it points at:
 *  - the direct one, by the key's id (below 2^26): pages of 64 ids, taken
 *    when one of their ids is put and given back to a list of free pages
 *    when they hold none, under a directory by id / 64. A run's buffer ids are dense (the trace checker
 *    numbers a run's allocs 0, 1, 2..., check.c feed_alloc), so a buffer
 *    is found in one read of its page, and buffers allocated together
 *    share a page: a free reads a cache line its neighbours' frees read
 *    too. It replaced the hashed index for these ids after `perf` put the
 *    hashed probes at 3.7% of a layers=3000 run's samples (wave 13): a
 *    Fibonacci hash scatters the ids of buffers allocated together, and
 *    its backward shift reads the slot of every key it passes;
 *  - the hashed one, for the rest (an id at or above 2^26, or the id of a
 *    buffer of another memory than the one the direct entry holds): open
 *    addressing with linear probing, Fibonacci hashing of the key and
 *    removal by backward shift. An index of (key, pointer) pairs
 *    (core/idmap.h) would cost four times the memory.
 *
 * Invariants:
 *  1. the hashed index's capacity is a power of two, at least 16, and
 *     holds at most half as many keys;
 *  2. every key it holds lies on the probe run from its home bucket, with
 *     no empty bucket between;
 *  3. a key is held at most once: putting a key held drops the buffer it
 *     had (its slot goes back to the free list);
 *  4. memory is bounded by the most buffers live at once: the slots, the
 *     most 272-byte pages held at once (a page per 64 ids holding one),
 *     the hashed index, and the directory (8 bytes per 64 ids up to the
 *     largest id held);
 *  5. a page counts the keys it holds; a key is put in the hashed index
 *     only when its id is not below 2^26 or its direct entry holds another
 *     key then (where it stays after that key is taken: a put into an
 *     empty direct entry looks in the hashed index first while it holds
 *     any).
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
