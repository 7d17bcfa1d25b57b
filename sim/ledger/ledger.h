/*
 * ledger.h: the accounting of one memory, fed by its allocator's events and
 * by the program's ops.
 *
 * Every consumer that places buffers with a strata allocator (the engine,
 * the untimed replay, the real backends' plan) keeps one ledger per memory
 * and feeds it two streams:
 *  - the allocator's stats after each of its calls, in execution order
 *    (strata_ledger_observe), from which it keeps
 *      peak_allocated, peak_reserved  maxima;
 *      internal_waste                 rounding waste when allocated peaked;
 *      fragmentation_peak             max of 1 - largest_free / free_in_reserved
 *                                     (0 while nothing in reserved is free);
 *  - the program's allocs, frees, copies and computes in program (file)
 *    order, from which it keeps what jax.stages.Compiled.memory_analysis()
 *    reports for the memory:
 *      argument_bytes  buffers allocated before the program's first copy or
 *                      compute, minus those freed before it (the parameters);
 *      output_bytes    what the program returns: the buffers it allocated
 *                      and never freed, plus the arguments it wrote in place
 *                      (donated and updated) that live to the end; an
 *                      argument never written stays the caller's;
 *      alias_bytes     outputs that are donated arguments: an argument
 *                      written in place, or an output that a compute's
 *                      donate= pairs with an argument (as the donate policy
 *                      pairs them: the first unpaired out= no larger than it);
 *      temp_peak       peak over program order of the live bytes that are
 *                      neither arguments nor outputs;
 *      jax_total       temp_peak + argument + output - alias;
 *      padding_bytes   bytes a rewrite added to allocs, from the trace's
 *                      `option padding_bytes[.MEM]`.
 *
 * Outputs are known only at the end, so the temp peak is kept in segments:
 * each non-argument buffer opens one, holding the highest live -
 * live arguments seen from its alloc to the next such alloc. When that
 * buffer is freed its segment merges into the one before it (both count the
 * same outputs from then on), so the segments are exactly the live
 * non-argument buffers, and the end subtracts from each segment's high the
 * outputs allocated up to it.
 *
 * Invariants:
 *  1. an event costs O(1) (a copy or compute: O(its operands)): one hash
 *     lookup per buffer and a few words; slots are recycled, so a steady
 *     state allocates nothing;
 *  2. args_live <= live; the peaks only grow;
 *  3. segment 0 (before any non-argument buffer) is never freed; the live
 *     non-argument buffers are linked in alloc order.
 */
#ifndef STRATA_LEDGER_H
#define STRATA_LEDGER_H

#include <stdbool.h>
#include <stdint.h>
#include "alloc/alloc.h"
#include "results/results.h"
#include "bind/bind.h"
#include "trace/check.h"

/* The padding option (trace/check.h) that the ledger reads into results. */
#define STRATA_LEDGER_PADDING_OPTION STRATA_OPTION_PADDING_BYTES

typedef struct strata_ledger strata_ledger;

strata_ledger *strata_ledger_new(void);
void strata_ledger_free(strata_ledger *l);

/* ---- the allocator, in execution order ---- */

/* Folds the allocator's stats after any of its calls into the peaks. */
void strata_ledger_observe(strata_ledger *l, const strata_alloc_stats *now);

/* ---- the program, in file order ---- */

/* Buffer `id` (size bytes) of this memory is allocated; it is an argument
 * when no copy or compute came before it. */
void strata_ledger_alloc(strata_ledger *l, uint64_t id, uint64_t size);
/* Buffer `id` is freed. False (and nothing counted) when the ledger does
 * not hold it. */
bool strata_ledger_free_buffer(strata_ledger *l, uint64_t id);
/* True while the ledger holds id (allocated, not freed). */
bool strata_ledger_holds(const strata_ledger *l, uint64_t id);
/* A copy or compute (every ledger of the program hears every one): the
 * first ends the arguments. op: the op as read; ins, outs: the ids of a
 * compute's in= and out=; dst: a copy's destination id. Buffers of other
 * memories are ignored. */
void strata_ledger_work(strata_ledger *l, const strata_op *op, const uint64_t *ins, const uint64_t *outs,
                        uint64_t dst);
/* The same by ids, for a consumer that no longer holds the op's names:
 * donated are the ids strata_ledger_donated() gives for it. */
void strata_ledger_work_ids(strata_ledger *l, strata_op_kind kind, uint64_t dst, const uint64_t *outs,
                            uint32_t n_outs, const uint64_t *donated, uint32_t n_donated);
/* The ids of a compute's donated in= (for each donate= name, the first in=
 * of that name; none found: skipped) into donated (room for op->n_donates);
 * returns how many. */
uint32_t strata_ledger_donated(const strata_op *op, const uint64_t *ins, uint64_t *donated);

/* One bound op of the program (bind/bind.h) for the ledger of memory
 * index `memory`: its allocs and frees, every copy and compute. */
void strata_ledger_bound_op(strata_ledger *l, uint32_t memory, const strata_bound_op *op);

/* Reads the trace's padding options for memory `name` (`padding_bytes.NAME`,
 * and `padding_bytes` when it is the default memory). */
void strata_ledger_read_options(strata_ledger *l, const strata_checker *c, const char *name, bool is_default);

/* The figures, into out's accounting fields (name, kind, allocator and
 * capacity are the caller's). */
void strata_ledger_fill(const strata_ledger *l, strata_memory_result *out);

#endif
