/*
 * runspec.c: the run-spec builder (runspec.h).
 *
 * Design: strata_run_spec_new() runs the steps of runspec.h in order, each
 * a small function that takes the stream and hands back the next one (or
 * NULL with err, having freed what it took: the convention of
 * policy.h and checked.h), so the first failure ends the build and the
 * spec's free function is the only clean-up path.
 *
 * Invariants (those of runspec.h, asserted where cheap):
 *  1. spec->src, when set, was built on spec->hw and is freed before it;
 *  2. at most one way of opening the stream is given (path, stream or
 *     function);
 *  3. a spec handed out holds a model when a model was asked for, and a
 *     stream when a stream was asked for.
 */
#include "runspec/runspec.h"

#include <assert.h>
#include "placement/placement_hw.h"
#include "policy/policy.h"
#include "spmd/spmd.h"
#include "spmd/spmd_names.h"
#include "trace/checked.h"
#include "trace/reader.h"

struct strata_run_spec {
    strata_hw *hw;       /* NULL without a model */
    strata_source *src;  /* NULL without a stream; may borrow hw */
};

static bool wants_hw(const strata_run_spec_options *opt) { return opt->hw_path || opt->hw_text; }

static bool wants_source(const strata_run_spec_options *opt)
{
    return opt->trace_path || opt->source || opt->open;
}

/* Step 1: the model with its allocators checked, or none. */
static bool load_hw(strata_run_spec *spec, const strata_run_spec_options *opt, GError **err)
{
    if (opt->hw_path)
        spec->hw = strata_placement_hw_load(opt->hw_path, opt->hw_overrides, err);
    else if (opt->hw_text)
        spec->hw = strata_placement_hw_load_data(opt->hw_text, opt->hw_origin ? opt->hw_origin : "hardware text",
                                                 opt->hw_overrides, err);
    return spec->hw || !wants_hw(opt);
}

/* Step 2: the stream, once the model is there. */
static strata_source *open_source(const strata_run_spec_options *opt, const strata_hw *hw, GError **err)
{
    if (opt->trace_path)
        return strata_trace_open(opt->trace_path, err);
    if (opt->source)
        return opt->source;
    return opt->open(opt->open_data, hw, err);
}

/* Steps 3 to 6 on an open stream (taken; NULL with err on failure). */
static strata_source *rewrite(strata_source *src, const strata_run_spec_options *opt, const strata_hw *hw,
                              GError **err)
{
    /* a program's names, as the SPMD expansion will read them */
    const strata_namer *names = &strata_spmd_program_namer;
    if (opt->checked)
        src = strata_checked_source_named(src, NULL, names);
    if (opt->policies && !(src = strata_policies_apply(src, opt->policies, hw, err)))
        return NULL;
    if (opt->checked)
        src = strata_checked_source_named(src, "policy output is not a valid trace: ", names);
    if (opt->expand_spmd && hw && strata_spmd_devices(hw) > 1)
        src = strata_spmd_expand_as(src, hw,
                                    opt->collective_steps  ? STRATA_SPMD_STEPS
                                    : opt->collective_all  ? STRATA_SPMD_PHASES
                                    : opt->collective_fast ? STRATA_SPMD_FAST
                                                           : STRATA_SPMD_CLASSES);
    return src;
}

strata_run_spec *strata_run_spec_new(const strata_run_spec_options *opt, GError **err)
{
    assert(!!opt->trace_path + !!opt->source + !!opt->open <= 1); /* invariant 2 */
    strata_run_spec *spec = g_new0(strata_run_spec, 1);
    if (!load_hw(spec, opt, err)) {
        strata_source_free(opt->source);
        strata_run_spec_free(spec);
        return NULL;
    }
    if (wants_source(opt)) {
        assert(!wants_hw(opt) || spec->hw); /* invariant 3: the stream opens once the model loaded */
        strata_source *src = open_source(opt, spec->hw, err);
        if (!src || !(spec->src = rewrite(src, opt, spec->hw, err))) {
            strata_run_spec_free(spec);
            return NULL;
        }
    }
    assert(!wants_hw(opt) || spec->hw);          /* invariant 3 */
    assert(!wants_source(opt) || spec->src); /* invariant 2: built whole */
    return spec;
}

void strata_run_spec_free(strata_run_spec *spec)
{
    if (!spec)
        return;
    strata_source_free(spec->src); /* invariant 1: the stream may borrow the model */
    strata_hw_free(spec->hw);
    g_free(spec);
}

const strata_hw *strata_run_spec_hw(const strata_run_spec *spec) { return spec->hw; }

strata_source *strata_run_spec_source(const strata_run_spec *spec) { return spec->src; }
