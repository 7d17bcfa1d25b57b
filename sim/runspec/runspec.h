/*
 * runspec.h: a run spec, what every consumer of an op stream starts from:
 * the hardware model and the op stream that runs on it, built in one place.
 *
 * Building one does, in this order, what `run`, `check`, `validate`,
 * `validate --published`, `validate --against`, `replay`, `transform` and
 * `alloc` each did by hand:
 *  1. load the hardware model, from a file or from text, with KEY=VALUE
 *     overrides and its allocators checked (placement/placement_hw.h);
 *  2. open the op stream: a trace file ('-' reads standard input), a stream
 *     the caller made, or one a function opens once the model is loaded; a
 *     trace file whose leading `option mesh=` has K devices, fewer than the
 *     model's N, runs on a slice: the model is loaded again with
 *     hardware.devices=K (unless --set gave hardware.devices), with a note
 *     on standard error;
 *  3. optionally read it through the trace checker (trace/checked.h);
 *  4. apply the policies (policy/policy.h), left to right, on the model;
 *  5. optionally check the policies' output again ("policy output is not a
 *     valid trace: ..."), so a rewrite can never hand out a bad trace;
 *  6. optionally expand an SPMD program over the model's devices
 *     (spmd/spmd.h) when it has more than one.
 * The first step that fails ends the build with its error unchanged (the
 * loader's and the reader's messages name the file and the line), so a
 * command reports exactly what it reported when it did the steps itself.
 *
 * Use:
 *   strata_run_spec_options o = {.hw_path = hw, .trace_path = trace,
 *                                .policies = policies, .expand_spmd = true};
 *   strata_run_spec *spec = strata_run_spec_new(&o, &err);
 *   if (!spec) goto fail;
 *   strata_engine_run(strata_run_spec_hw(spec), strata_run_spec_source(spec), ...);
 *   strata_run_spec_free(spec);
 *
 * Invariants:
 *  1. a spec owns its hardware model and its op stream; the stream (which
 *     may borrow the model: policies, SPMD expansion) is freed first;
 *  2. a spec that exists was built whole: every step asked for succeeded;
 *     on failure nothing is kept (a stream handed in is freed too);
 *  3. the steps run in the order above, and the stream is opened only once
 *     the model has loaded;
 *  4. without a model (no hw_path, no hw_text) the policies see NULL and
 *     nothing is expanded; without a stream the spec holds the model alone.
 */
#ifndef STRATA_RUNSPEC_H
#define STRATA_RUNSPEC_H

#include <glib.h>
#include <stdbool.h>
#include "hw/hw.h"
#include "results/results.h"
#include "trace/source.h"

typedef struct strata_run_spec strata_run_spec;

/* Opens the op stream of a spec, with the model loaded (NULL without one). */
typedef strata_source *(*strata_run_spec_open_fn)(void *data, const strata_hw *hw, GError **err);

/* What to build; a zeroed struct builds an empty spec. Everything is
 * borrowed for the call, except `source`, which is taken. */
typedef struct strata_run_spec_options {
    const char *hw_path;              /* hardware .ini file, or NULL */
    const char *hw_text;              /* or its text (when hw_path is NULL) */
    const char *hw_origin;            /* names hw_text in messages */
    const char *const *hw_overrides;  /* KEY=VALUE (--set), NULL-terminated; NULL: none */
    const char *trace_path;           /* trace file ('-': standard input), or NULL */
    strata_source *source;            /* or an op stream (taken, even on failure) */
    strata_run_spec_open_fn open;     /* or a function that opens one (open_data passed) */
    void *open_data;
    const char *const *policies;      /* specs applied in order, NULL-terminated; NULL: none */
    bool checked;                     /* check the stream before and after the policies (transform) */
    bool expand_spmd;                 /* expand over the devices when the model has more than one */
    bool collective_steps;            /* ... with every collective step by step, not in phases (spmd.h) */
    bool collective_all;              /* ... in phases on every device, not one device per class (spmd.h) */
    bool collective_fast;             /* ... with approximate classes (spmd.h's FAST) */
    bool collective_classes;          /* ... with exact classes only (CLASSES); none of the four: AUTO */
    uint64_t auto_copies;             /* AUTO's max_copies (spmd.h); 0: STRATA_SPMD_AUTO_COPIES */
} strata_run_spec_options;

/* Builds the spec; NULL with err set by the first step that failed. */
strata_run_spec *strata_run_spec_new(const strata_run_spec_options *opt, GError **err);
void strata_run_spec_free(strata_run_spec *spec);

/* Builds the spec and runs its stream through the engine with the engine's
 * default options: the results in *out (strata_results_free; they hold
 * nothing of the spec), false with err set by the step that failed (*out
 * may then hold partial results, to be freed as well). */
bool strata_run_spec_run(const strata_run_spec_options *opt, strata_results **out, GError **err);

/* The hardware model, or NULL without one. */
const strata_hw *strata_run_spec_hw(const strata_run_spec *spec);
/* The op stream after every step (owned by the spec), or NULL without one. */
strata_source *strata_run_spec_source(const strata_run_spec *spec);

#endif
