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
#include <string.h>
#include "core/mesh.h"
#include "engine/engine.h"
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
    if (opt->policies && !strata_policies_once(opt->policies, err)) { /* --policy prefetch=2 --policy prefetch=3 */
        strata_source_free(src);
        return NULL;
    }
    if (opt->policies && !(src = strata_policies_apply(src, opt->policies, hw, err)))
        return NULL;
    if (opt->checked)
        src = strata_checked_source_named(src, "policy output is not a valid trace: ", names);
    if (opt->expand_spmd && hw && strata_spmd_devices(hw) > 1)
        src = strata_spmd_expand_auto(src, hw,
                                      opt->collective_steps     ? STRATA_SPMD_STEPS
                                      : opt->collective_all     ? STRATA_SPMD_PHASES
                                      : opt->collective_fast    ? STRATA_SPMD_FAST
                                      : opt->collective_classes ? STRATA_SPMD_CLASSES
                                                                : STRATA_SPMD_AUTO,
                                      opt->auto_copies ? opt->auto_copies : STRATA_SPMD_AUTO_COPIES);
    return src;
}

/* The devices of the stream's leading `option mesh=`, 0 when none (or the
 * stream fails: its error comes again when it is read); rewinds it. */
static uint32_t leading_mesh_devices(strata_source *src, GError **err)
{
    const strata_op *op;
    uint32_t devices = 0;
    GError *local = NULL;
    while (devices == 0 && strata_source_next(src, &op, &local) == 1 && op->kind == STRATA_OP_OPTION)
        if (strcmp(op->name, "mesh") == 0) {
            strata_mesh *m = strata_mesh_parse(op->value, NULL);
            devices = m ? strata_mesh_devices(m) : 0;
            strata_mesh_free(m);
        }
    g_clear_error(&local);
    return strata_source_rewind(src, err) ? devices : UINT32_MAX;
}

/* A program on fewer devices than the model (a mesh of K, the model N > K,
 * no hardware.devices= given): the model again with hardware.devices=K, a
 * slice of its first K devices, said on standard error. False only when
 * the stream cannot rewind; a model that refuses K devices stays as it was
 * (the checker then names the mismatch). */
static bool slice_to_mesh(strata_run_spec *spec, const strata_run_spec_options *opt, strata_source *src,
                          GError **err)
{
    uint32_t k = leading_mesh_devices(src, err);
    if (k == UINT32_MAX)
        return false;
    uint32_t n = strata_hw_devices(spec->hw);
    if (k == 0 || k >= n)
        return true;
    GPtrArray *over = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *o = opt->hw_overrides; o && *o; o++) {
        if (g_str_has_prefix(*o, "hardware.devices=")) {
            g_ptr_array_free(over, TRUE);
            return true; /* the user chose */
        }
        g_ptr_array_add(over, g_strdup(*o));
    }
    g_ptr_array_add(over, g_strdup_printf("hardware.devices=%u", k));
    g_ptr_array_add(over, NULL);
    strata_run_spec_options sliced = *opt;
    sliced.hw_overrides = (const char *const *)over->pdata;
    strata_run_spec tmp = {0};
    if (load_hw(&tmp, &sliced, NULL)) {
        char *which = k == 1 ? g_strdup("device 0") : g_strdup_printf("devices 0-%u", k - 1);
        g_printerr("strata: note: %s: the program's mesh has %u device%s, the hardware %s %u: it runs on a slice, "
                   "%s (as --set hardware.devices=%u)\n", strata_source_origin(src), k, k == 1 ? "" : "s",
                   opt->hw_path ? opt->hw_path : "model", n, which, k);
        g_free(which);
        strata_hw_free(spec->hw);
        spec->hw = tmp.hw;
    }
    g_ptr_array_free(over, TRUE);
    return true;
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
        if (src && spec->hw && opt->trace_path && !slice_to_mesh(spec, opt, src, err)) {
            strata_source_free(src);
            src = NULL;
        }
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

bool strata_run_spec_run(const strata_run_spec_options *opt, strata_results **out, GError **err)
{
    *out = NULL;
    strata_run_spec *spec = strata_run_spec_new(opt, err);
    if (!spec)
        return false;
    strata_engine_options eo;
    strata_engine_options_init(&eo);
    bool ok = strata_engine_run(strata_run_spec_hw(spec), strata_run_spec_source(spec), &eo, out, err);
    strata_run_spec_free(spec);
    return ok;
}
