/*
 * cmd_run.c: `strata run`, the timed simulation of a trace on a hardware
 * model (sim/engine), with a human summary, JSON results and a timeline.
 *
 * Order of work (so that nothing is lost and nothing is half written):
 *  1. parse options; a missing --hw or --trace is a usage error (exit 2);
 *  2. open every output file (outfile.h): an unwritable path fails here,
 *     before any work;
 *  3. load the hardware model (with --set overrides), open the trace and
 *     apply the policies in order;
 *  4. run the engine; bad input anywhere is exit 2 with FILE:LINE;
 *  5. write the JSON and the timeline, print the summary; exit 1 when the
 *     simulated program ran out of memory, else 0.
 */
#include <stdio.h>
#include <string.h>
#include "alloc/alloc.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/outfile.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "results/results.h"
#include "trace/reader.h"

static const char run_description[] =
    "Simulates TRACE on the machine described by HW.ini with SimGrid and prints a\n"
    "summary: the makespan; per memory, the peak allocated and reserved bytes against\n"
    "the capacity and the fragmentation peak; per link, the bytes carried and the\n"
    "utilization (busy time / makespan); per stream, busy and stall time; per compute\n"
    "unit, busy time and flops.\n"
    "\n"
    "Timing model: a copy of B bytes takes the sum of its route's latencies plus\n"
    "B / (bottleneck bandwidth), sharing links and memory ports max-min fairly with\n"
    "concurrent transfers; a compute takes time= if given, else the slower of\n"
    "flops / peak and operand bytes / memory bandwidth, plus the unit's overhead.\n"
    "See docs/engine.md.\n"
    "\n"
    "Exit status: 0 done; 1 the simulated program ran out of memory (the results,\n"
    "with the out-of-memory report, are still written); 2 bad input or usage (the\n"
    "message names the file, the line and what was expected); 3 internal error.";

typedef struct run_args {
    char *hw;
    char *trace;
    char **policies;
    char *allocator;
    char **sets;
    char *json;
    char *timeline;
    gboolean quiet;
    gboolean check_allocators;
} run_args;

static void run_args_clear(run_args *a)
{
    g_free(a->hw);
    g_free(a->trace);
    g_strfreev(a->policies);
    g_free(a->allocator);
    g_strfreev(a->sets);
    g_free(a->json);
    g_free(a->timeline);
}

/* Checks that path can be written, before any work (the file is not created). */
static bool probe_output(const char *path, GError **err)
{
    strata_outfile *o = strata_outfile_open(path, err);
    if (!o)
        return false;
    strata_outfile_abort(o);
    return true;
}

static bool write_json(strata_outfile *out, const strata_results *r, GError **err)
{
    char *text = strata_results_to_json_text(r);
    fputs(text, strata_outfile_stream(out));
    g_free(text);
    return strata_outfile_commit(out, err);
}

int strata_cmd_run(int argc, char **argv)
{
    run_args a = {0};
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.hw, "Hardware model (configs/hw/*.ini); required", "HW.ini"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "Trace to simulate (traces/FORMAT.md; '-' reads standard input); required", "T.trace"},
        {"policy", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.policies,
         "Rewrite the op stream before running (prefetch=2, pad, offload=optstate, ...); repeatable, "
         "applied in order", "P"},
        {"allocator", 0, 0, G_OPTION_ARG_STRING, &a.allocator,
         "Allocator for every memory, overriding the .ini: NAME[:key=value,...] "
         "(best-fit, caching:max_split_size=200MiB)", "SPEC"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.sets,
         "Override a hardware key before validation (memory.hbm.capacity=16GiB, "
         "link.pcie.bandwidth=32GB/s); repeatable", "KEY=VALUE"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &a.json,
         "Write the results as JSON ('-' = standard output; the summary then goes to standard error)", "OUT"},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &a.timeline,
         "Write a Chrome trace-event / Perfetto timeline: a track per stream, link and memory, "
         "memory counters", "OUT.json"},
        {"check-allocators", 0, 0, G_OPTION_ARG_NONE, &a.check_allocators,
         "Check every allocator's invariants after each op (slow; for debugging allocators)", NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet, "Do not print the summary", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *octx = g_option_context_new("- simulate a trace on a hardware model");
    char *allocators = strata_alloc_type_names();
    char *policies = strata_policy_type_names();
    char *description = g_strdup_printf("%s\n\nAllocators: %s.\nPolicies: %s.", run_description,
                                        allocators, policies);
    g_option_context_set_description(octx, description);
    g_free(allocators);
    g_free(policies);
    g_option_context_add_main_entries(octx, entries, NULL);
    int status = STRATA_EXIT_OK;
    strata_hw *hw = NULL;
    strata_source *src = NULL;
    strata_results *results = NULL;
    strata_outfile *json_out = NULL;
    GError *err = NULL;

    if (!strata_cli_parse(octx, &argc, &argv, "run", &status))
        goto done;
    if (argc > 1) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                          "unexpected argument '%s'; expected options only (see 'strata run --help')", argv[1]);
        goto fail;
    }
    if (!a.hw || !a.trace) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "expected --hw HW.ini and --trace T.trace "
                          "(see 'strata run --help')");
        goto fail;
    }
    if (a.json && !(json_out = strata_outfile_open(a.json, &err)))
        goto fail;
    if (a.timeline && !probe_output(a.timeline, &err))
        goto fail;

    hw = strata_hw_load(a.hw, (const char *const *)a.sets, &err);
    if (!hw)
        goto fail;
    src = strata_trace_open(a.trace, &err);
    if (!src)
        goto fail;
    if (a.policies && a.policies[0]) {
        src = strata_policies_apply(src, (const char *const *)a.policies, hw, &err);
        if (!src)
            goto fail;
    }
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = a.timeline != NULL;
    opt.check_allocators = a.check_allocators;
    opt.allocator = a.allocator;
    if (!strata_engine_run(hw, src, &opt, &results, &err))
        goto fail;

    if (json_out) {
        bool ok = write_json(json_out, results, &err);
        json_out = NULL;
        if (!ok)
            goto fail;
    }
    if (a.timeline && !strata_results_write_timeline(results, a.timeline, &err))
        goto fail;
    if (!a.quiet)
        strata_results_print_summary(results, a.json && strcmp(a.json, "-") == 0 ? stderr : stdout);
    status = results->oom ? STRATA_EXIT_OOM : STRATA_EXIT_OK;
    goto done;

fail:
    status = strata_cli_fail("run", err);
done:
    strata_outfile_abort(json_out);
    strata_results_free(results);
    strata_source_free(src);
    strata_hw_free(hw);
    run_args_clear(&a);
    g_option_context_free(octx);
    g_free(description);
    return status;
}
