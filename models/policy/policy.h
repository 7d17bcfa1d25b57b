/*
 * policy.h: policies, i.e. rewrites of the op stream (op stream in, op
 * stream out), chosen by name and composed left to right.
 *
 * A policy spec is "NAME[=ARG][:KEY=VALUE,...]" (prefetch=2, pad=8x128,
 * offload=optstate:ahead=4, prefetch:distance=2) as given to --policy on run,
 * alloc and transform. Each policy declares its parameters in a table of
 * strata_param_def (core/params.h); ARG sets the one parameter the type
 * names in `arg`, the KEY=VALUE list sets any of them, and a parameter given
 * twice is an error.
 * Applying a policy wraps a source in a new source; because every source can
 * rewind, a policy that needs to look ahead (lifetimes, next use) makes a
 * first pass over its input and rewinds it. The rewritten stream is an
 * ordinary trace: `strata transform` writes it and a real backend replays it.
 *
 * The table of policies is one NULL-terminated static array in policy.c.
 */
#ifndef STRATA_POLICY_H
#define STRATA_POLICY_H

#include "core/params.h"
#include "hw/hw.h"
#include "trace/check.h"
#include "trace/source.h"

typedef struct strata_policy_type {
    const char *name;
    const char *summary;      /* "prefetch=N: issue each copy N ops ahead ..." */
    bool arg_required;        /* the parameter `arg` must be given */
    const strata_param_def *params; /* declared parameters (NULL: none) */
    const char *arg;          /* the parameter NAME=ARG sets (NULL: takes no ARG) */
    /* The parameter whose values tell two applications apart (offload's
     * kind: param, then optstate); NULL: the policy is applied once. */
    const char *repeat_by;
    /* Wrap `in` (takes ownership of it, frees it on error). p holds the
     * validated parameters (borrowed for the call). hw may be NULL
     * (transform without --hw): policies that need the machine then use the
     * shared memory names (hbm, host, vmem) or fail with a
     * clear error. */
    strata_source *(*apply)(strata_source *in, const strata_params *p, const strata_hw *hw, GError **err);
} strata_policy_type;

const strata_policy_type *strata_policy_type_find(const char *name);
char *strata_policy_type_names(void); /* g_free */
/* Parses a spec into its type (*type) and validated parameters (free with
 * strata_params_free); NULL with err on an unknown name, an ARG the policy
 * does not take, a missing required ARG, or a bad or repeated parameter. */
strata_params *strata_policy_params(const char *spec, const strata_policy_type **type, GError **err);
/* Everything strata can check about a spec without a trace or hardware:
 * the parameters and the policy's own range checks (it is applied to an
 * empty stream). */
bool strata_policy_check(const char *spec, GError **err);
/* Help text: each policy's summary and parameter table (g_free). */
char *strata_policy_describe(const char *indent);

/* Each policy at most once in specs (NULL-terminated), or once per value
 * of its repeat_by parameter: the same policy twice rewrote its own output
 * again (--policy prefetch=2 --policy prefetch=3 ran both), which no
 * composition means. False with err naming both specs; a spec that does
 * not parse repeats nothing (applying it says why). The commands check this
 * (runspec.c, the experiment loader); strata_policies_apply composes any
 * list, so that a policy's idempotence can be tested (pad twice). */
bool strata_policies_once(const char *const *specs, GError **err);
/* What strata_policies_once tells specs apart by: the policy's name, and
 * its repeat_by parameter's value where it has one ("prefetch", "offload
 * kind=param"); two specs repeat each other when their keys are equal.
 * NULL for a spec that does not parse (g_free). For callers that match
 * many specs against many (a sweep's policy axes) through a hash table. */
char *strata_policy_repeat_key(const char *spec);

/* Apply specs in order. Takes ownership of src (freed on error). specs is
 * NULL-terminated (NULL or empty: src returned unchanged). */
strata_source *strata_policies_apply(strata_source *src, const char *const *specs,
                                     const strata_hw *hw, GError **err);

/* The execution model of the copy policies (offload, prefetch), their
 * `sched=` parameter: "xla" (an async copy is a copy-start/copy-done pair in
 * one program order; every op after copy-done waits for it, so memory follows
 * program order and time stretches) or "cuda" (streams run on; a buffer freed
 * on the copy stream is released when that stream gets there). "auto" takes
 * the trace's `option sched=...`, else the hardware's [hardware] sched, else
 * cuda. trace_option may be NULL. Sets *xla; false with err on a bad value. */
extern const char *const strata_policy_sched_choices[]; /* auto, xla, cuda */
bool strata_policy_sched_xla(const char *param, const char *trace_option, const strata_hw *hw, bool *xla,
                             GError **err);
/* Keeps the value of a trace's `option sched=...` in *trace_option, replacing
 * an earlier one; any other op is ignored. */
void strata_policy_note_sched(const strata_op *op, char **trace_option);

/* Parses pad's "RxC" argument (NULL: 8x128). */
bool strata_pad_parse_tile(const char *arg, uint64_t *rows, uint64_t *lanes, GError **err);

#endif
