/*
 * offline.h: the parts of the offline planner (private to
 * models/alloc/offline*.c; the allocator is strata_alloc_offline).
 *
 *  - offline_greedy.c: the lower bound, the placement pass over several
 *    orderings and the local search over the order;
 *  - offline_sweep.c: the placement by start time in O(n log n), for
 *    problems too large for the general pass;
 *  - offline_search.c: the bounded exact search (after MiniMalloc) over a
 *    ladder of target heights;
 *  - offline.c: the allocator that plans with them and serves the plan.
 *
 * Invariants: a buffer lives over [start, end) with start < end (steps,
 * see offline.c); size is rounded to the alignment; a plan's offsets never
 * put two buffers whose lifetimes intersect on overlapping addresses.
 */
#ifndef STRATA_ALLOC_OFFLINE_H
#define STRATA_ALLOC_OFFLINE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/progress.h"

typedef struct offline_buf {
    uint64_t id, size, start, end; /* size rounded to the alignment */
    uint64_t offset;
    double width; /* the lifetime's length: real time when known, else steps */
} offline_buf;

/* Orderings and ranks: a key per buffer, sorted descending by (k1, k2, k3),
 * then by index (a stable order without qsort_r). */
typedef struct offline_key {
    uint64_t k1, k2, k3;
    size_t index;
} offline_key;

int offline_cmp_key(const void *a, const void *b);
bool offline_overlap(const offline_buf *a, const offline_buf *b);

/* The peak of live bytes: no plan can be lower. */
uint64_t offline_lower_bound(const offline_buf *bufs, size_t n);

/* The best greedy plan (several orderings, best-fit and first-fit), then
 * the local search: `iterations` steps at most (fewer for large n), while
 * the height is above lower_bound. Fills offsets; returns the height. */
uint64_t offline_greedy(const offline_buf *bufs, size_t n, int64_t iterations,
                        uint64_t lower_bound, uint64_t *offsets, strata_progress *progress);

/* The plan of placing the buffers by start time (larger first among equal
 * starts), each in the best-fitting gap left by the live ones, in
 * O(n log n): the general pass's plan for that order. Fills order (that
 * order) and offsets; returns the height. */
uint64_t offline_sweep(const offline_buf *bufs, size_t n, size_t *order, uint64_t *offsets);

/* Lowers *height (offsets: its plan, improved in place) with the exact
 * search, spending at most search_nodes; keeps the plan when the problem
 * is too large for it. */
void offline_exact(const offline_buf *bufs, size_t n, uint64_t lower_bound,
                   int64_t search_nodes, uint64_t *height, uint64_t *offsets,
                   strata_progress *progress);

/* Shows the best height so far against the lower bound on progress. */
void offline_show(strata_progress *progress, size_t n, uint64_t height, uint64_t lower_bound,
                  const char *stage);

#endif
