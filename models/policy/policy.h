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

#endif
