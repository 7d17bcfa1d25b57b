/*
 * idmap.h: a map from 64-bit ids to non-NULL pointers, for the per-op
 * lookups of buffer ids (the allocators' live blocks, the ledger's slots,
 * the checker's live buffers).
 *
 * Design: open addressing with linear probing in one array of (id, value)
 * pairs, Fibonacci hashing of the id (so the dense ids the checker hands
 * out, 0, 1, 2..., spread evenly), removal by backward shift (no
 * tombstones). A lookup costs one multiplication and, at the load kept here,
 * one or two probes of adjacent slots; no call through a function pointer
 * and no allocation per entry.
 *
 * Invariants:
 *  1. capacity is a power of two, at least 16, and count <= capacity / 2;
 *  2. a slot is empty iff its value is NULL;
 *  3. every entry lies on the probe run that starts at its home slot, with
 *     no empty slot between its home and where it lies;
 *  4. memory is bounded by the most entries held at once, not by the
 *     number of puts.
 */
#ifndef STRATA_IDMAP_H
#define STRATA_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct strata_idmap strata_idmap;

strata_idmap *strata_idmap_new(void);
void strata_idmap_free(strata_idmap *m);

/* Maps id to value (not NULL), replacing what id mapped to. */
void strata_idmap_put(strata_idmap *m, uint64_t id, void *value);
/* The value of id, or NULL. */
void *strata_idmap_get(const strata_idmap *m, uint64_t id);
/* Removes id and returns its value, or NULL when id was not mapped. */
void *strata_idmap_take(strata_idmap *m, uint64_t id);
size_t strata_idmap_size(const strata_idmap *m);
/* Calls visit on every entry, in no particular order; the map must not
 * change during the walk. */
void strata_idmap_foreach(const strata_idmap *m, void (*visit)(uint64_t id, void *value, void *user),
                          void *user);

/* Open addressing as here, for tables that keep other entries (results/
 * timeline_live.c keeps slot numbers): the home of id in a table of
 * 1 << bits entries (Fibonacci hashing, bits at least 1), and whether
 * backward shift moves the entry at j, whose home is `home`, into the hole
 * at `hole` (the hole lies on its way from its home). */
static inline size_t strata_idmap_home(uint64_t id, unsigned bits)
{
    return (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

static inline bool strata_idmap_shifts(size_t hole, size_t j, size_t home, size_t mask)
{
    return ((j - home) & mask) >= ((j - hole) & mask);
}

#endif
