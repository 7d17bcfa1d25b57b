/*
 * ledger.h: the accounting of one memory, fed by its allocator's events.
 *
 * Every consumer that places buffers with a strata allocator (the engine,
 * the untimed replay, the real backends' plan) keeps one ledger per memory
 * and tells it, after each allocator call, what happened and the
 * allocator's stats at that moment. The ledger alone turns these events
 * into the figures a memory reports:
 *   peak_allocated, peak_reserved  maxima over the events;
 *   internal_waste                 rounding waste when allocated peaked;
 *   fragmentation_peak             max of 1 - largest_free / free_in_reserved
 *                                  (0 while nothing in reserved is free);
 *   argument_bytes                 buffers allocated before the program's
 *                                  first copy or compute, in file order,
 *                                  minus those freed before it;
 *   output_bytes                   bytes live at the end;
 *   temp_peak                      peak of allocated minus the live
 *                                  arguments and the live outputs (buffers
 *                                  allocated after the first work and never
 *                                  freed);
 *   padding_bytes                  bytes a rewrite added to allocs, from the
 *                                  trace's `option padding_bytes[.MEM]`.
 *
 * Outputs are known only at the end, so the temp peak is kept in segments:
 * each buffer allocated after the first work opens one, holding the highest
 * allocated - live arguments seen from its alloc to the next such alloc.
 * When that buffer is freed its segment merges into the one before it
 * (both count the same outputs from then on), so the segments are exactly
 * the live non-argument buffers, and the end subtracts from each segment's
 * high the outputs allocated up to it.
 *
 * Invariants:
 *  1. an event costs O(1): one hash lookup and a few words; slots are
 *     recycled, so a steady state allocates nothing;
 *  2. args_live <= allocated; the peaks only grow;
 *  3. segment 0 (before any non-argument buffer) is never freed; the live
 *     segments are linked in alloc order.
 */
#ifndef STRATA_LEDGER_H
#define STRATA_LEDGER_H

#include <stdbool.h>
#include <stdint.h>
#include "alloc/alloc.h"
#include "results/results.h"
#include "trace/check.h"

/* The option key a rewrite that grows allocs writes (KEY=N for the default
 * memory, KEY.MEM=N for a named one). */
#define STRATA_LEDGER_PADDING_OPTION "padding_bytes"

typedef struct strata_ledger strata_ledger;

strata_ledger *strata_ledger_new(void);
void strata_ledger_free(strata_ledger *l);

/* The allocator placed buffer `id` (size bytes); argument: its alloc comes
 * before the program's first copy or compute in file order. now: the
 * allocator's stats after the call. */
void strata_ledger_alloc(strata_ledger *l, uint64_t id, uint64_t size, bool argument,
                         const strata_alloc_stats *now);
/* The allocator freed `id`; before_work: the free comes before the first
 * copy or compute in file order. False (and nothing counted) when the
 * ledger does not hold id. */
bool strata_ledger_free_buffer(strata_ledger *l, uint64_t id, bool before_work,
                               const strata_alloc_stats *now);
/* True while the ledger holds id (placed, not freed). */
bool strata_ledger_holds(const strata_ledger *l, uint64_t id);
/* Any other allocator call (a release): fold its stats into the peaks. */
void strata_ledger_observe(strata_ledger *l, const strata_alloc_stats *now);

/* Reads the trace's padding options for memory `name` (`padding_bytes.NAME`,
 * and `padding_bytes` when it is the default memory). */
void strata_ledger_read_options(strata_ledger *l, const strata_checker *c, const char *name, bool is_default);

/* The figures, into out's accounting fields (name, kind, allocator and
 * capacity are the caller's). */
void strata_ledger_fill(const strata_ledger *l, strata_memory_result *out);

#endif
