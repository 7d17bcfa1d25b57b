/*
 * cmd_serve.c: `strata serve`, a serving simulation (sim/serve/serve.h):
 * a model served with TP over a hardware model's devices, a request stream
 * from a CSV file (the Azure LLM inference traces as they ship) or Poisson
 * arrivals, vLLM's scheduler, and one KV allocation scheme or all of them
 * on the same stream.
 *
 *   strata serve --hw HW.ini (--model NAME | --model-file FILE) [--set K=V]...
 *                (--requests CSV [--limit N] | --poisson n=..,rate=..,...)
 *                [--tp N] [--kv NAME|all] [scheduler and memory options]
 *                [--json OUT] [--quiet]
 *
 * Exit status: 0 done, 2 bad input or usage (FILE:LINE for a bad file).
 * Invariant: --json is checked before any work and written complete or not
 * at all.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/jsonout.h"
#include "core/progress.h"
#include "core/units.h"
#include "hw/hw.h"
#include "serve/serve.h"
#include "serve/serve_args.h"
#include "serve/serve_report.h"

/* Whether the option that sets knob was given, whatever its value
 * (--step-overhead 0 too: the options not given are NULL or
 * STRATA_SERVE_UNSET). */
static bool knob_option_given(const strata_serve_args *a, const char *knob)
{
    const struct {
        const char *knob;
        bool given;
    } rows[] = {{"max_num_seqs", a->max_seqs != STRATA_SERVE_UNSET},
                {"max_num_batched_tokens", a->max_tokens != STRATA_SERVE_UNSET},
                {"block_size", a->block != STRATA_SERVE_UNSET},
                {"gpu_memory_utilization", a->util != NULL},
                {"tp", a->tp != STRATA_SERVE_UNSET},
                {"concurrency", a->concurrency != STRATA_SERVE_UNSET},
                {"step_overhead", a->step_overhead != NULL},
                {"swap_space", a->swap_space != NULL},
                {"num_scheduler_steps", a->scheduler_steps != STRATA_SERVE_UNSET}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++)
        if (strcmp(rows[i].knob, knob) == 0)
            return rows[i].given;
    return false;
}

/* The engine's defaults at a sweep point (SGLang's mem_fraction_static by
 * TP, max_running_requests from the pool): the options' were taken at the
 * options' tp and pool, which the knob may move; an option given, or the
 * knob itself, keeps its value. */
static void point_defaults(const strata_serve_args *a, const strata_serve_setup *set, const char *knob,
                           strata_serve_config *c)
{
    bool util = knob_option_given(a, "gpu_memory_utilization") || strcmp(knob, "gpu_memory_utilization") == 0;
    bool seqs = knob_option_given(a, "max_num_seqs") || strcmp(knob, "max_num_seqs") == 0;
    strata_serve_config_engine_defaults(c, &set->model, set->hw, util, seqs);
}

/* The knob's option beside --sweep of it (the sweep's values replaced it
 * at every point), and two values that set the knob alike ("1,01": two
 * rows of one run): refused. */
static bool sweep_knob_once(const strata_serve_args *a, const char *knob, char **values,
                            const strata_serve_config *probes, GError **err)
{
    if (knob_option_given(a, knob)) {
        char *option = g_strdelimit(g_strconcat("--", knob, NULL), "_", '-');
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected either %s or --sweep %s=..., which sets "
                    "it at every point (%s would be ignored)", option, option, knob, option);
        g_free(option);
        return false;
    }
    for (guint i = 0; values[i]; i++)
        for (guint j = 0; j < i; j++)
            if (strata_serve_config_knob_same(&probes[i], &probes[j], knob)) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--sweep: values '%s' and '%s' of %s are the same "
                            "setting: two rows of one run; give each value once", values[j], values[i], knob);
                return false;
            }
    return true;
}

/* The sweep's values (--sweep KNOB=V1,V2,...), each checked on a copy of
 * the configuration, its scheduler's rules included (a budget below
 * max_model_len for vllm-v0 ran and stalled as a full pool); one empty
 * point without --sweep. */
static bool sweep_points(const strata_serve_args *a, const strata_serve_setup *set, char **knob, char ***values,
                         GError **err)
{
    const char *sweep = a->sweep;
    const strata_serve_config *c = &set->config;
    *knob = NULL;
    if (!sweep) {
        *values = g_new0(char *, 2);
        (*values)[0] = g_strdup("");
        return true;
    }
    const char *eq = strchr(sweep, '=');
    if (!eq || eq == sweep || !eq[1]) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--sweep: expected KNOB=V1,V2,..., got '%s'", sweep);
        return false;
    }
    *knob = g_strndup(sweep, (gsize)(eq - sweep));
    *values = g_strsplit(eq + 1, ",", -1);
    strata_serve_config *probes = g_new(strata_serve_config, g_strv_length(*values) + 1);
    bool ok = true;
    for (guint i = 0; ok && (*values)[i]; i++) {
        probes[i] = *c; /* a copy: the probes differ in the knob's field alone */
        ok = strata_serve_config_set(&probes[i], *knob, (*values)[i], err);
        if (ok)
            point_defaults(a, set, *knob, &probes[i]);
        ok = ok && strata_serve_config_check_scheduler(&probes[i], set->model.max_model_len, "block_size", err);
        /* --time-scale beside a closed-loop point: that point's JSON was the same without it */
        ok = ok && strata_serve_args_time_scale_read(a, probes[i].concurrency, "concurrency=", err);
        if (!ok)
            g_prefix_error(err, "--sweep: ");
    }
    ok = ok && sweep_knob_once(a, *knob, *values, probes, err);
    g_free(probes);
    return ok;
}

/* Every scheme at every sweep point, into runs. */
static bool serve_points(strata_job *job, const strata_serve_args *a, strata_serve_setup *set, GPtrArray *runs,
                         GError **err)
{
    char *knob = NULL, **values = NULL;
    bool ok = sweep_points(a, set, &knob, &values, err);
    strata_progress *progress = strata_progress_new(strata_progress_stream(a->quiet));
    for (char **v = values; ok && v && *v; v++) {
        strata_serve_config c = set->config;
        c.record_steps = a->timeline != NULL;
        if (knob) {
            strata_serve_config_set(&c, knob, *v, NULL);
            point_defaults(a, set, knob, &c);
        }
        for (guint i = 0; ok && i < set->schemes->len; i++) {
            const strata_serve_kv_scheme *k = g_ptr_array_index(set->schemes, i);
            strata_job_doing(job, "serving %u requests with %s", set->stream->n, k->name);
            strata_serve_result *r = strata_serve_run(set->hw, &set->model, &c, set->stream, k, progress, err);
            ok = r != NULL;
            if (ok)
                strata_serve_report_refused(stderr, "strata serve", r, set->stream, &c, set->model.max_model_len);
            if (ok && knob)
                g_snprintf(r->label, sizeof r->label, "%s=%s", knob, *v);
            if (ok)
                g_ptr_array_add(runs, r);
        }
    }
    strata_progress_free(progress);
    g_free(knob);
    g_strfreev(values);
    return ok;
}

static bool serve_all(strata_job *job, const strata_serve_args *a, strata_outfile **json_out,
                      strata_outfile **timeline_out, GError **err)
{
    strata_serve_setup set;
    GPtrArray *runs = g_ptr_array_new_with_free_func((GDestroyNotify)strata_serve_result_free);
    bool ok = strata_serve_setup_make(&set, a, NULL, err) && serve_points(job, a, &set, runs, err);
    strata_serve_report rep = {&set.model, &set.config, ok ? strata_hw_name(set.hw) : NULL,
                               ok ? set.stream->origin : NULL, (strata_serve_result *const *)runs->pdata, runs->len,
                               ok ? set.clock_ratio : 1.0};
    if (ok)
        strata_serve_report_print(&rep, strata_job_human(job));
    if (ok && *json_out) {
        JsonNode *root = strata_serve_report_json(&rep);
        char *text = strata_json_text(root);
        ok = strata_job_commit_text(job, json_out, text, err);
        g_free(text);
        json_node_unref(root);
    }
    if (ok && *timeline_out)
        ok = strata_job_commit(job, timeline_out,
                               strata_serve_report_timeline(&rep, strata_outfile_stream(*timeline_out)), err);
    g_ptr_array_free(runs, TRUE);
    strata_serve_setup_clear(&set);
    return ok;
}

int strata_cmd_serve(int argc, char **argv)
{
    strata_serve_args a = {0};
    GOptionEntry *entries = strata_serve_args_entries(&a);
    char *presets = strata_serve_model_presets(), *keys = strata_serve_model_keys(), *kvs = strata_serve_kv_names();
    char *knobs = strata_serve_config_knobs(), *scheds = strata_serve_scheduler_help();
    char *desc = g_strdup_printf("Models: %s\nModel keys: %s\nKV schemes: %s\nSweep knobs: %s\nSchedulers "
                                 "(--scheduler):\n%sExit status: 0 done, 2 bad input or usage.\n", presets, keys, kvs,
                                 knobs, scheds);
    strata_job *job = strata_job_new("serve", "- simulate serving a request stream (vLLM's scheduler)",
                                     "Continuous batching with chunked prefill over a paged KV cache (or another "
                                     "allocation scheme),\nstep times from the kernel models on the hardware model.",
                                     desc, entries);
    GError *err = NULL;
    strata_outfile *json_out = NULL, *timeline_out = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 0, 0, NULL)) {
        if (strata_job_input_hw(job, "--hw", a.hw, &err) && strata_job_input(job, "--requests", a.requests, &err) &&
            strata_job_input(job, "--model-file", a.model_file, &err) &&
            strata_job_input(job, "--config", a.config, &err) &&
            strata_job_output(job, "--json", a.json, &json_out, &err) &&
            strata_job_output_timeline(job, a.timeline, true, &timeline_out, &err) &&
            serve_all(job, &a, &json_out, &timeline_out, &err))
            status = STRATA_EXIT_OK;
    }
    status = strata_job_end(job, status, err);
    g_free(presets), g_free(keys), g_free(kvs), g_free(knobs), g_free(scheds), g_free(desc);
    strata_serve_args_clear(&a);
    g_free(entries);
    return status;
}
