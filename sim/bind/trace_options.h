/*
 * trace_options.h: the table of every key a trace's `option KEY=VALUE` line
 * may set, checked once, on the option's line, by the binder (bind.h),
 * which knows the hardware (and by `strata alloc` on the options it reads
 * before replaying, for allocator.device_limit).
 *
 * A trace's options are read where they are used (the checker and the
 * SPMD expansion read mesh, the copy policies sched, the ledgers
 * padding_bytes, the placements allocator.*), each reader taking what it
 * knows and passing over the rest. The table makes the rest an error:
 *
 *   key                 value                               read by
 *   mesh                AXIS:SIZE,... (core/mesh.h)         trace/check.c, spmd/spmd.c, engine_feed.c
 *   sched               xla or cuda                         policy/policy.c (the copy policies)
 *   padding_bytes       a size                              ledger/ledger.c (the default memory)
 *   padding_bytes.MEM   a size; MEM a memory of the         ledger/ledger.c (memory MEM)
 *                       hardware (with several devices an
 *                       instance, hbm@3)
 *   allocator.KEY       KEY a parameter some allocator      placement/placement.c, cli/cmd_alloc.c
 *                       declares (alloc/alloc.h), the       (device_limit)
 *                       value of its declared type
 *
 * Invariants:
 *  1. every key some reader reads has a row, and a key no row accepts is
 *     bad input: an unknown key, a value its row's parser refuses, and a
 *     key that names a memory the hardware lacks are each
 *     STRATA_ERROR_INPUT "ORIGIN:LINE: option KEY: expected ..., got ...";
 *  2. a row checks what its reader would parse, with the reader's own
 *     parser where there is one (strata_mesh_parse, strata_parse_size,
 *     strata_policy_sched_xla, the allocator's strata_params), so what
 *     passes here is read, never dropped;
 *  3. an allocator.KEY declared by some allocator is accepted whichever
 *     allocator a memory runs (one that does not declare KEY passes over
 *     it, so a PyTorch trace runs under every allocator), and its value
 *     must suit every allocator that declares it;
 *  4. without hardware (hw NULL: `strata check` without --hw, `strata
 *     alloc`) memory names are not checked; everything else is.
 */
#ifndef STRATA_TRACE_OPTIONS_H
#define STRATA_TRACE_OPTIONS_H

#include <glib.h>
#include <stdbool.h>
#include "hw/hw.h"
#include "trace/op.h"

/* The prefix of the options that reach allocators (placement/placement.h). */
#define STRATA_TRACE_OPTION_ALLOCATOR_PREFIX "allocator."

/* Checks the option op (kind STRATA_OP_OPTION) read from `origin` against
 * the table and hw (NULL: no hardware). false with err (STRATA_ERROR_INPUT,
 * "ORIGIN:LINE: option KEY: expected ..., got '...'") when bad. */
bool strata_trace_option_check(const strata_op *op, const char *origin, const strata_hw *hw, GError **err);

#endif
