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
 *  4. run the engine, which writes the timeline into its temporary file as
 *     the run goes; bad input anywhere is exit 2 with FILE:LINE;
 *  5. write the JSON, commit the timeline, print the summary; exit 1 when
 *     the simulated program ran out of memory, else 0.
 */
#include <stdio.h>
#include <string.h>
#include "alloc/alloc.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/units.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "results/results.h"
#include "runspec/runspec.h"
#include "spmd/spmd.h"

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
    char *collectives;
    char *compile_to;
    char *clock;
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
    g_free(a->collectives);
    g_free(a->compile_to);
    g_free(a->clock);
}

/* Options that do not go with --compile-to or with a compiled --trace: the
 * error, or NULL. */
static GError *compiled_conflict(const run_args *a, bool compiled)
{
    if (a->compile_to && (a->json || a->timeline || compiled))
        return g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--compile-to: %s",
                           compiled ? "--trace is compiled already"
                                    : "writes no --json or --timeline (it does not simulate)");
    if (compiled && (a->policies || a->collectives))
        return g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a compiled trace takes no %s (give it when compiling)",
                           a->trace, a->policies ? "--policy" : "--collectives");
    return NULL;
}

/* --clock's choices (engine.h strata_engine_clock), the first the default. */
static const struct {
    const char *name;
    strata_engine_clock clock;
} clocks[] = {{"duty", STRATA_ENGINE_CLOCK_DUTY}, {"peak", STRATA_ENGINE_CLOCK_PEAK},
              {"sustained", STRATA_ENGINE_CLOCK_SUSTAINED}};

/* --clock's value (NULL: the default) as the engine's; false if it is none of them. */
static bool clock_of(const char *name, strata_engine_clock *out)
{
    for (size_t i = 0; i < G_N_ELEMENTS(clocks); i++)
        if (!name || strcmp(name, clocks[i].name) == 0) {
            *out = clocks[i].clock;
            return true;
        }
    return false;
}

/* The default's threshold (spmd.h AUTO: copies in a round over every
 * device) from STRATA_CLASSES_FALLBACK_COPIES, for tests that cannot run
 * a pod; 0 (spmd.h's STRATA_SPMD_AUTO_COPIES) when unset; false with err
 * when set to anything but a whole number >= 1 (g_ascii_strtoull read
 * "abc" as the default and "-1" as 2^64 - 1, silently). */
static bool auto_copies(uint64_t *copies, GError **err)
{
    const char *env = g_getenv("STRATA_CLASSES_FALLBACK_COPIES");
    *copies = 0;
    if (!env || (strata_parse_u64(env, copies, NULL) && *copies > 0))
        return true;
    *copies = 0;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "STRATA_CLASSES_FALLBACK_COPIES (environment): expected a whole number of copies >= 1, got '%s'",
                env);
    return false;
}

/* The run spec's options from the command line's (compiled: the trace is
 * a compiled one, read by the engine: the spec holds the model alone). */
/* The rule run's --clock checks: sustained only. duty is run's default, and like no --clock it runs the peak
 * where a unit gives no clock_response (the option's help), so naming it changes nothing (review, wave 44). */
static const char *run_clock_checked(const char *clock)
{
    return clock && strcmp(clock, "duty") == 0 ? NULL : clock;
}

static strata_run_spec_options spec_options(const run_args *a, bool compiled)
{
    const char *c = a->collectives ? a->collectives : "";
    uint64_t copies;
    auto_copies(&copies, NULL); /* bad_choice checked it */
    return (strata_run_spec_options){.hw_path = a->hw, .hw_overrides = (const char *const *)a->sets,
                                     .trace_path = compiled ? NULL : a->trace,
                                     .policies = (const char *const *)a->policies,
                                     .expand_spmd = true,
                                     .collective_steps = strcmp(c, "steps") == 0,
                                     .collective_all = strcmp(c, "phases") == 0,
                                     .collective_fast = strcmp(c, "fast") == 0,
                                     .collective_classes = strcmp(c, "classes") == 0,
                                     .auto_copies = copies};
}

/* --collectives or --clock not one of its choices, or a bad
 * STRATA_CLASSES_FALLBACK_COPIES: the error, or NULL. */
static GError *bad_choice(const run_args *a)
{
    strata_engine_clock clock;
    uint64_t copies;
    GError *err = NULL;
    if (!auto_copies(&copies, &err))
        return err;
    if (a->collectives && strcmp(a->collectives, "classes") != 0 && strcmp(a->collectives, "phases") != 0 &&
        strcmp(a->collectives, "steps") != 0 && strcmp(a->collectives, "fast") != 0)
        return g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                           "--collectives: expected classes, phases, steps or fast, got '%s'", a->collectives);
    if (!clock_of(a->clock, &clock))
        return g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--clock: expected duty, peak or sustained, got '%s'",
                           a->clock);
    return NULL;
}

/* The engine's options from the command line's. */
static void engine_options_for(const run_args *a, strata_outfile *timeline_out, strata_engine_options *opt)
{
    strata_engine_options_init(opt);
    opt->timeline = timeline_out ? strata_outfile_stream(timeline_out) : NULL; /* written while running */
    opt->timeline_format = strata_timeline_format_of(a->timeline);
    opt->check_allocators = a->check_allocators;
    opt->allocator = a->allocator;
    opt->progress = strata_progress_stream(a->quiet);
    clock_of(a->clock, &opt->clock); /* bad_choice checked it */
}

/* --compile-to: the first pass over spec's trace written to *out, opened
 * on a->compile_to as every output is (never an input, whole or not at
 * all, nothing left on a signal), then committed (STRATA_EXIT_OK), or err. */
static int compile_trace(strata_job *job, const run_args *a, const char *trace_name, const strata_run_spec *spec,
                         const strata_engine_options *opt, strata_outfile **out, GError **err)
{
    strata_job_doing(job, "compiling %s to %s", trace_name, a->compile_to);
    bool ok = strata_engine_compile(strata_run_spec_hw(spec), strata_run_spec_source(spec), opt, a->compile_to,
                                    strata_outfile_stream(*out), err);
    return strata_job_commit(job, out, ok, err) ? STRATA_EXIT_OK : STRATA_EXIT_USAGE;
}

int strata_cmd_run(int argc, char **argv)
{
    run_args a = {0};
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.hw, "Hardware model (configs/hw/*.ini); required", "HW.ini"},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &a.trace,
         "Trace to simulate (traces/FORMAT.md; '-' reads standard input), or a compiled trace that --compile-to "
         "wrote; required", "T.trace"},
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
         "Write a Chrome trace-event / Perfetto timeline while running: a track per stream, link and memory, "
         "memory counters (OUT.json.gz: gzip-compressed; OUT.pftrace: Perfetto's protobuf trace)", "OUT.json"},
        {"check-allocators", 0, 0, G_OPTION_ARG_NONE, &a.check_allocators,
         "Check every allocator's invariants after each op (slow; for debugging allocators)", NULL},
        {"collectives", 0, 0, G_OPTION_ARG_STRING, &a.collectives,
         "How collectives run on several devices: classes (default: phases, simulating one device of each "
         "class of devices that the machine's and the program's symmetry makes alike; where it finds none "
         "and every device's run would move more than 8,192 copies in a round, the default runs fast and says "
         "so on standard error), "
         "phases (every device; "
         "the identical rounds of a ring or a torus dimension as one flow per link that pays every round's "
         "latency), steps (every round of the schedule; the reference, slower) or fast (classes made by "
         "symmetries that move the steps but not every route, as a ring laid row by row over a torus: "
         "approximate); docs/multi-device.md",
         "classes|phases|steps|fast"},
        {"clock", 0, 0, G_OPTION_ARG_STRING, &a.clock,
         "The clock of units whose hardware file gives peak_clock and sustained_clock (a GPU's power limit): "
         "duty (default: each compute at the clock its unit's matrix activity, filtered over clock_response, "
         "leaves it; the peak where the file gives no clock_response), peak (every compute at the clock the "
         "peak rates are quoted at) or sustained (every compute at sustained_clock); docs/engine.md, "
         "\"The power limit's clock\"", "duty|peak|sustained"},
        {"compile-to", 0, 0, G_OPTION_ARG_FILENAME, &a.compile_to,
         "Do not simulate: read, check and bind TRACE to HW (the run's first pass) and write it to OUT as a "
         "compiled trace, which a later run takes as --trace OUT with the same --hw and --set and replays "
         "without the text, to the same results (one device only; docs/engine.md, \"Compiled traces\")",
         "OUT"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet,
         "Do not print the summary, nor the progress line a terminal otherwise shows (ops read, ops simulated "
         "and the simulated time)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char *allocators = strata_alloc_type_names();
    char *policies = strata_policy_type_names();
    char *hw_keys = strata_hw_describe("  ");
    char *description = g_strdup_printf("%s\n\nAllocators: %s.\nPolicies: %s.\n\nHardware file (--hw):\n%s",
                                        run_description, allocators, policies, hw_keys);
    g_free(hw_keys);
    g_free(allocators);
    g_free(policies);
    strata_job *job = strata_job_new("run", "- simulate a trace on a hardware model", NULL, description, entries);
    int status = STRATA_EXIT_USAGE;
    strata_run_spec *spec = NULL;
    strata_results *results = NULL;
    strata_outfile *json_out = NULL, *timeline_out = NULL, *compile_out = NULL;
    GError *err = NULL;

    if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL))
        goto done;
    if (!a.hw || !a.trace) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "expected --hw HW.ini and --trace T.trace "
                          "(see 'strata run --help')");
        goto done;
    }
    if ((err = bad_choice(&a)))
        goto done;
    if (!strata_job_input_hw(job, "--hw", a.hw, &err) || !strata_job_input(job, "--trace", a.trace, &err))
        goto done;
    bool compiled = strata_engine_is_compiled(a.trace);
    if ((err = compiled_conflict(&a, compiled)))
        goto done;
    if (!strata_job_output(job, "--json", a.json, &json_out, &err) ||
        !strata_job_output_timeline(job, a.timeline, false, &timeline_out, &err) ||
        !strata_job_output(job, "--compile-to", a.compile_to, &compile_out, &err))
        goto done;
    const char *trace_name = strcmp(a.trace, "-") == 0 ? "standard input" : a.trace;
    strata_job_doing(job, "reading %s and %s", a.hw, trace_name);
    strata_run_spec_options spec_opt = spec_options(&a, compiled);
    if (!(spec = strata_run_spec_new(&spec_opt, &err)) ||
        !strata_hw_check_clock_rule(strata_run_spec_hw(spec), a.hw, run_clock_checked(a.clock),
                                    STRATA_HW_CLOCKED_UNITS, &err))
        goto done; /* --clock sustained on units that give no sustained_clock ran the peak (hw.h; serve's check) */
    const char *note = strata_spmd_note(strata_run_spec_source(spec));
    if (note) /* the default ran fast, or an exact run will be long */
        fprintf(stderr, "strata run: %s: note: %s\n", trace_name, note);
    strata_engine_options opt;
    engine_options_for(&a, timeline_out, &opt);
    if (a.compile_to) {
        status = compile_trace(job, &a, trace_name, spec, &opt, &compile_out, &err);
        goto done;
    }
    strata_job_doing(job, "simulating %s", trace_name);
    if (compiled ? !strata_engine_run_compiled(strata_run_spec_hw(spec), a.trace, &opt, &results, &err)
                 : !strata_engine_run(strata_run_spec_hw(spec), strata_run_spec_source(spec), &opt, &results, &err))
        goto done;
    strata_job_doing(job, "writing the results");
    if (!strata_job_commit_results(job, &json_out, results, &err) ||
        !strata_job_commit(job, &timeline_out, true, &err))
        goto done;
    if (!a.quiet)
        strata_results_print_summary(results, strata_job_human(job));
    status = results->oom ? STRATA_EXIT_OOM : STRATA_EXIT_OK;
done:
    status = strata_job_end(job, status, err);
    strata_results_free(results);
    strata_run_spec_free(spec);
    run_args_clear(&a);
    g_free(description);
    return status;
}
