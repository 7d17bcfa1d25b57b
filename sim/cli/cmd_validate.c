/*
 * cmd_validate.c: `strata validate --hw HW.ini --trace T --backend host|cuda [--json OUT]`,
 * a simulation and a real replay of the same trace, compared op by op.
 *
 * Order: the real replay runs first (nothing else is busy in this process),
 * then the engine, once (SimGrid allows one engine per process), on the
 * rewound trace; backend/compare.h does the comparison.
 *
 * `strata validate --published [FILE.ini...]` instead simulates published
 * measurements (validate/published.h; default: every case file in
 * validation/) and prints measured, simulated and error per case.
 */
#include <stdio.h>
#include <string.h>
#include "backend/compare.h"
#include "cli/backend_args.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "engine/engine.h"
#include "runspec/runspec.h"
#include "validate/published.h"

typedef struct validate_args {
    strata_backend_args b;
    gboolean quiet;
    gboolean published;
    char *against;
} validate_args;

static char *validate_json(const validate_args *a, const strata_hw *hw, const strata_comparison *cmp,
                           const strata_results *sim, const strata_results *real)
{
    JsonNode *root = strata_comparison_to_json(cmp);
    JsonObject *o = json_node_get_object(root);
    json_object_set_string_member(o, "trace", a->b.trace);
    json_object_set_string_member(o, "hardware", strata_hw_name(hw));
    json_object_set_string_member(o, "backend", a->b.backend);
    json_object_set_string_member(o, "status_sim", sim->oom ? "oom" : "ok");
    json_object_set_string_member(o, "status_real", real->oom ? "oom" : "ok");
    json_object_set_member(o, "simulated", strata_results_to_json(sim));
    json_object_set_member(o, "measured", strata_results_to_json(real));
    char *line = strata_json_text(root);
    json_node_unref(root);
    return line;
}

/* The real replay first (nothing else busy), then the engine on the rewound trace. */
static bool validate_run(strata_job *job, const validate_args *a, const strata_backend *backend,
                         const strata_run_spec *spec, strata_results **real, strata_results **sim, GError **err)
{
    const strata_hw *hw = strata_run_spec_hw(spec);
    strata_source *src = strata_run_spec_source(spec);
    strata_backend_options opt;
    strata_backend_args_options(&a->b, &opt);
    strata_job_doing(job, "replaying %s on the %s backend", a->b.trace, backend->name);
    if (!backend->run(hw, src, &opt, real, err) || !strata_source_rewind(src, err))
        return false;
    strata_engine_options eopt;
    strata_engine_options_init(&eopt);
    eopt.record_spans = true;
    eopt.check_allocators = a->b.check_allocators;
    strata_job_doing(job, "simulating %s", a->b.trace);
    return strata_engine_run(hw, src, &eopt, sim, err);
}

static int validate_main(strata_job *job, validate_args *a)
{
    GError *err = NULL;
    strata_outfile *json = NULL;
    strata_run_spec *spec = NULL;
    strata_results *real = NULL, *sim = NULL;
    strata_comparison *cmp = NULL;
    int status = STRATA_EXIT_USAGE;
    const strata_backend *backend = strata_backend_args_check(&a->b, true, &err);
    if (!backend)
        goto done;
    if (!strata_job_input_hw(job, "--hw", a->b.hw, &err) || !strata_job_input(job, "--trace", a->b.trace, &err))
        goto done;
    /* The trace as written: validate has never expanded SPMD programs (expand_spmd off). */
    strata_run_spec_options spec_opt = {.hw_path = a->b.hw, .trace_path = a->b.trace};
    if (!strata_job_output(job, "--json", a->b.json, &json, &err) || !(spec = strata_run_spec_new(&spec_opt, &err)) ||
        !validate_run(job, a, backend, spec, &real, &sim, &err))
        goto done;
    cmp = strata_compare_results(sim, real);
    FILE *table = strata_job_human(job);
    if (!a->quiet)
        strata_comparison_print(cmp, table);
    else
        fprintf(table, "makespan: simulated %.6f s, measured %.6f s, error %+.1f%%\n", cmp->makespan_sim_s,
                cmp->makespan_real_s, cmp->makespan_error_signed * 100);
    if (json) {
        char *text = validate_json(a, strata_run_spec_hw(spec), cmp, sim, real);
        bool ok = strata_job_commit_text(job, &json, text, &err);
        g_free(text);
        if (!ok)
            goto done;
    }
    status = STRATA_EXIT_OK;
    if (sim->oom || real->oom) {
        fprintf(stderr, "strata %s: the trace ran out of memory (%s)\n", strata_job_cmd(job),
                sim->oom ? "simulated" : "measured");
        status = STRATA_EXIT_OOM;
    }
done:
    strata_comparison_free(cmp);
    strata_results_free(real);
    strata_results_free(sim);
    strata_run_spec_free(spec);
    return strata_job_end(job, status, err);
}

/* The published cases of the files named (default: every validation/NAME.ini). */
static int validate_published(strata_job *job, int argc, char **argv)
{
    GError *err = NULL;
    strata_published *set = strata_published_new();
    bool ok = true;
    for (int i = 1; ok && i < argc; i++) /* '' said "cannot read validation file: Failed to open file", naming none */
        ok = strata_job_input(job, "--published", argv[i], &err) && strata_published_load(set, argv[i], &err);
    if (ok && argc < 2) {
        char *dir = strata_published_default_dir();
        ok = strata_published_load_dir(set, dir, &err);
        g_free(dir);
    }
    strata_job_doing(job, "simulating published cases");
    int status = STRATA_EXIT_OK;
    if (ok && strata_published_run(set, &err)) {
        strata_published_print(set, strata_job_human(job));
        for (size_t i = 0; i < strata_published_count(set); i++) {
            const strata_published_case *c = strata_published_case_at(set, i);
            if (c->out_of_memory) { /* printed with the others; exit 1, as run's out of memory */
                fprintf(stderr, "strata validate: %s: the trace ran out of memory (case '%s')\n", c->where, c->name);
                status = STRATA_EXIT_OOM;
            }
        }
    }
    strata_published_free(set);
    return strata_job_end(job, status, err);
}

/* The three modes take different options: one given to a mode that would
 * ignore it (--json with --published, --against with --published, ...) is
 * an error naming both, never silently dropped. NULL: none. */
static GError *validate_mode_conflict(const validate_args *a)
{
    const char *mode = a->published ? "--published" : a->against ? "--against" : NULL;
    if (mode == NULL)
        return NULL;
    strata_backend_args unset; /* the replay's numbers at their defaults: not given (or given as them) */
    strata_backend_args_init(&unset);
    const struct {
        const char *option;
        bool given;
    } ignored[] = {
        {"--against", a->published && a->against != NULL},
        {"--trace", a->b.trace != NULL},
        {"--hw", a->published && a->b.hw != NULL},
        {"--backend", a->b.backend != NULL},
        {"--json", a->b.json != NULL},
        {"--device-memory", a->b.device_memory != NULL},
        {"--repeats", a->b.repeats != unset.repeats},
        {"--warmup", a->b.warmup != unset.warmup},
        {"--check-allocators", a->b.check_allocators},
        {"--quiet", a->quiet},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(ignored); i++)
        if (ignored[i].given)
            return g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                               "%s does not go with %s (it would be ignored); run them as separate commands",
                               ignored[i].option, mode);
    return NULL;
}

int strata_cmd_validate(int argc, char **argv)
{
    validate_args a = {0};
    strata_backend_args_init(&a.b);
    char *backend_help = strata_backend_args_help("Real backend to compare with");
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.b.hw, "Hardware model to simulate (e.g. from strata calibrate)",
         "HW.ini"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &a.b.trace, "Trace to simulate and replay", "T.trace"},
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &a.b.backend, backend_help, "NAME"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.b.json,
         "Write makespan_sim_s, makespan_real_s, makespan_error, per_op_error percentiles (p50, p90, p99, max), "
         "every op's error and both results here; '-' is standard output",
         "OUT"},
        {"repeats", 'r', 0, G_OPTION_ARG_INT, &a.b.repeats, "Timed real runs; the median run is compared (default 5)",
         "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_INT, &a.b.warmup, "Untimed real runs first (default 1)", "N"},
        {"device-memory", 'm', 0, G_OPTION_ARG_STRING, &a.b.device_memory,
         "cuda: device memory as arena (default), malloc or async (see strata replay --help)", "MODE"},
        {"check-allocators", 0, 0, G_OPTION_ARG_NONE, &a.b.check_allocators,
         "Check every allocator's invariants after each op of the placement (slow; for debugging allocators)", NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet, "Print only the makespan line, not every op", NULL},
        {"published", 0, 0, G_OPTION_ARG_NONE, &a.published,
         "Simulate the published measurements of the case files given as arguments (default: every validation/NAME.ini) "
         "and print measured, simulated and error per case",
         NULL},
        {"against", 0, 0, G_OPTION_ARG_FILENAME, &a.against,
         "Instead of a replay: simulate a PyTorch profiler trace (Chrome JSON[.gz]) imported with its kernels at "
         "their measured times on --hw, and print each memcpy direction's error and the reserved-curve error "
         "(docs/kineto-import.md)",
         "TRACE.json"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new("validate", "- compare a simulation with a real replay of the same trace", "Replays the trace for real on the backend, simulates it on the hardware model, and prints for\n"
             "every copy and compute its simulated and measured durations and the error (sim - real) / real,\n"
             "then the percentiles of |error| and the makespan error.", "Exit status: 0 done; 1 the trace ran out of memory (--published: a case the model cannot fit is "
                                          "printed as out of memory and the others still run); 2 bad input, usage or no device.", entries);
    GError *conflict = NULL;
    int status = !strata_job_parse(job, &argc, &argv, 0, -1, NULL) ? strata_job_end(job, STRATA_EXIT_USAGE, NULL)
                 : (conflict = validate_mode_conflict(&a)) != NULL ? strata_job_end(job, STRATA_EXIT_USAGE, conflict)
                 : a.published                                    ? validate_published(job, argc, argv)
                 : argc > 1 ? strata_job_end(job, STRATA_EXIT_USAGE,
                                             g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                                                         "unexpected argument '%s' (case files go with --published)",
                                                         argv[1]))
                 : a.against ? strata_validate_against(job, a.against, a.b.hw)
                            : validate_main(job, &a);
    g_free(a.against);
    g_free(backend_help);
    strata_backend_args_clear(&a.b);
    return status;
}
