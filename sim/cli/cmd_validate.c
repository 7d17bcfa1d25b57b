/*
 * cmd_validate.c: `strata validate --hw HW.ini --trace T --backend host|cuda [--json OUT]`,
 * a simulation and a real replay of the same trace, compared op by op.
 *
 * Order: the real replay runs first (nothing else is busy in this process),
 * then the engine, once (SimGrid allows one engine per process), on the
 * rewound trace; backend/compare.h does the comparison.
 */
#include <stdio.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/compare.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/outfile.h"
#include "engine/engine.h"
#include "trace/reader.h"

static const char *CMD = "validate";

typedef struct validate_args {
    char *backend, *trace, *hw, *json, *device_memory;
    int repeats, warmup;
    gboolean quiet;
} validate_args;

static JsonNode *validate_json(const validate_args *a, const strata_hw *hw, const strata_comparison *cmp,
                               const strata_results *sim, const strata_results *real)
{
    JsonNode *root = strata_comparison_to_json(cmp);
    JsonObject *o = json_node_get_object(root);
    json_object_set_string_member(o, "trace", a->trace);
    json_object_set_string_member(o, "hardware", strata_hw_name(hw));
    json_object_set_string_member(o, "backend", a->backend);
    json_object_set_string_member(o, "status_sim", sim->oom ? "oom" : "ok");
    json_object_set_string_member(o, "status_real", real->oom ? "oom" : "ok");
    json_object_set_member(o, "simulated", strata_results_to_json(sim));
    json_object_set_member(o, "measured", strata_results_to_json(real));
    return root;
}

static int validate_main(validate_args *a)
{
    GError *err = NULL;
    if (!a->trace || !a->hw || !a->backend) {
        fprintf(stderr, "strata %s: --hw, --trace and --backend are required\nRun 'strata %s --help' for usage.\n",
                CMD, CMD);
        return STRATA_EXIT_USAGE;
    }
    const strata_backend *backend = strata_backend_find(a->backend, &err);
    if (!backend)
        return strata_cli_fail(CMD, err);
    if (a->repeats < 1 || a->warmup < 0) {
        fprintf(stderr, "strata %s: --repeats must be at least 1 and --warmup at least 0\n", CMD);
        return STRATA_EXIT_USAGE;
    }
    strata_outfile *json = NULL;
    if (a->json && !(json = strata_outfile_open(a->json, &err)))
        return strata_cli_fail(CMD, err);
    strata_hw *hw = NULL;
    strata_source *src = NULL;
    strata_results *real = NULL, *sim = NULL;
    strata_comparison *cmp = NULL;
    int status = STRATA_EXIT_OK;
    if (!(hw = strata_hw_load(a->hw, NULL, &err)))
        goto fail;
    if (!(src = strata_trace_open(a->trace, &err)))
        goto fail;
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = a->repeats;
    opt.warmup = a->warmup;
    opt.device_memory = a->device_memory;
    if (!backend->run(hw, src, &opt, &real, &err))
        goto fail;
    if (!strata_source_rewind(src, &err))
        goto fail;
    strata_engine_options eopt;
    strata_engine_options_init(&eopt);
    eopt.record_spans = true;
    if (!strata_engine_run(hw, src, &eopt, &sim, &err))
        goto fail;
    cmp = strata_compare_results(sim, real);
    FILE *table = json && strcmp(a->json, "-") == 0 ? stderr : stdout;
    if (!a->quiet)
        strata_comparison_print(cmp, table);
    else
        fprintf(table, "makespan: simulated %.6f s, measured %.6f s, error %+.1f%%\n", cmp->makespan_sim_s,
                cmp->makespan_real_s, cmp->makespan_error_signed * 100);
    if (json) {
        JsonNode *root = validate_json(a, hw, cmp, sim, real);
        JsonGenerator *gen = json_generator_new();
        json_generator_set_pretty(gen, TRUE);
        json_generator_set_root(gen, root);
        char *text = json_generator_to_data(gen, NULL);
        fprintf(strata_outfile_stream(json), "%s\n", text);
        g_free(text);
        g_object_unref(gen);
        json_node_unref(root);
        bool ok = strata_outfile_commit(json, &err);
        json = NULL;
        if (!ok)
            goto fail;
    }
    if (sim->oom || real->oom) {
        fprintf(stderr, "strata %s: the trace ran out of memory (%s)\n", CMD,
                sim->oom ? "simulated" : "measured");
        status = STRATA_EXIT_OOM;
    }
    goto done;
fail:
    status = strata_cli_fail(CMD, err);
done:
    strata_outfile_abort(json);
    strata_comparison_free(cmp);
    strata_results_free(real);
    strata_results_free(sim);
    strata_source_free(src);
    strata_hw_free(hw);
    return status;
}

int strata_cmd_validate(int argc, char **argv)
{
    validate_args a = {0};
    a.repeats = 5;
    a.warmup = 1;
    char *names = strata_backend_names();
    char *backend_help = g_strdup_printf("Real backend to compare with: %s", names);
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.hw, "Hardware model to simulate (e.g. from strata calibrate)",
         "HW.ini"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &a.trace, "Trace to simulate and replay", "T.trace"},
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &a.backend, backend_help, "NAME"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json,
         "Write makespan_sim_s, makespan_real_s, makespan_error, per_op_error percentiles (p50, p90, p99, max), "
         "every op's error and both results here; '-' is standard output",
         "OUT"},
        {"repeats", 'r', 0, G_OPTION_ARG_INT, &a.repeats, "Timed real runs; the median run is compared (default 5)",
         "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_INT, &a.warmup, "Untimed real runs first (default 1)", "N"},
        {"device-memory", 'm', 0, G_OPTION_ARG_STRING, &a.device_memory,
         "cuda: device memory as arena (default), malloc or async (see strata replay --help)", "MODE"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet, "Print only the makespan line, not every op", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- compare a simulation with a real replay of the same trace");
    g_option_context_set_summary(
        ctx, "Replays the trace for real on the backend, simulates it on the hardware model, and prints for\n"
             "every copy and compute its simulated and measured durations and the error (sim - real) / real,\n"
             "then the percentiles of |error| and the makespan error.");
    g_option_context_set_description(ctx, "Exit status: 0 done; 1 the trace ran out of memory; 2 bad input, usage or "
                                          "no device.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int status = STRATA_EXIT_OK;
    if (strata_cli_parse(ctx, &argc, &argv, CMD, &status)) {
        if (!strata_cli_expect_no_args(CMD, argc, argv)) {
            status = STRATA_EXIT_USAGE;
        } else {
            status = validate_main(&a);
        }
    }
    g_option_context_free(ctx);
    g_free(backend_help);
    g_free(names);
    g_free(a.backend);
    g_free(a.trace);
    g_free(a.hw);
    g_free(a.json);
    g_free(a.device_memory);
    return status;
}
