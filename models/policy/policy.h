/*
 * policy.h: policies, i.e. rewrites of the op stream (op stream in, op
 * stream out), chosen by name and composed left to right.
 *
 * A policy spec is "NAME" or "NAME=ARG" (prefetch=2, pad=8x128,
 * offload=optstate, ...) as given to --policy on run, alloc and transform.
 * Applying a policy wraps a source in a new source; because every source can
 * rewind, a policy that needs to look ahead (lifetimes, next use) makes a
 * first pass over its input and rewinds it. The rewritten stream is an
 * ordinary trace: `strata transform` writes it and a real backend replays it.
 *
 * The table of policies is one NULL-terminated static array in policy.c.
 */
#ifndef STRATA_POLICY_H
#define STRATA_POLICY_H

#include "hw/hw.h"
#include "trace/check.h"
#include "trace/source.h"

typedef struct strata_policy_type {
    const char *name;
    const char *summary;      /* "prefetch=N: issue each copy N ops ahead ..." */
    bool arg_required;
    /* Wrap `in` (takes ownership of it). hw may be NULL (transform without
     * --hw): policies that need the machine then use the names of BRIEF's
     * shared memories (hbm, host, vmem) or fail with a clear error. */
    strata_source *(*apply)(strata_source *in, const char *arg, const strata_hw *hw, GError **err);
} strata_policy_type;

const strata_policy_type *const *strata_policy_types(void);
const strata_policy_type *strata_policy_type_find(const char *name);
char *strata_policy_type_names(void); /* g_free */

/* Apply specs in order. Takes ownership of src (freed on error). specs is
 * NULL-terminated (NULL or empty: src returned unchanged). */
strata_source *strata_policies_apply(strata_source *src, const char *const *specs,
                                     const strata_hw *hw, GError **err);

/* The policies (one file each in models/policy/). */
extern const strata_policy_type strata_policy_prefetch;
extern const strata_policy_type strata_policy_nbuffer;
extern const strata_policy_type strata_policy_pad;
extern const strata_policy_type strata_policy_offload;
extern const strata_policy_type strata_policy_donate;
extern const strata_policy_type strata_policy_batch_copies;
extern const strata_policy_type strata_policy_transfer_guard;

/* Bytes a pad policy added to memory `memory` (its name in the trace or the
 * hardware model; is_default: it is the hardware's default memory), read from
 * the trace's options `pad.added_bytes[.MEM]` that pad writes. For consumers
 * filling strata_memory_result.padding_bytes. 0 when the trace was not padded. */
uint64_t strata_padding_bytes(const strata_checker *c, const char *memory, bool is_default);
/* Parses pad's "RxC" argument (NULL: 8x128). */
bool strata_pad_parse_tile(const char *arg, uint64_t *rows, uint64_t *lanes, GError **err);

#endif
