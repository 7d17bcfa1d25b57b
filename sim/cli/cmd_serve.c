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
#include "serve/serve_report.h"

typedef struct serve_args {
    char *hw, *model, *model_file, *requests, *poisson, *kv, *kv_page, *kv_allocator, *swap_space, *preemption;
    char *non_kv, *json;
    char **sets, **hw_sets;
    gint tp, max_seqs, max_tokens, block, limit, shared_prefix, concurrency;
    gdouble util, step_overhead;
    gboolean no_prefix, quiet;
} serve_args;

static void serve_args_clear(serve_args *a)
{
    char **strs[] = {&a->hw, &a->model, &a->model_file, &a->requests, &a->poisson, &a->kv, &a->kv_page,
                     &a->kv_allocator, &a->swap_space, &a->preemption, &a->non_kv, &a->json};
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
        g_free(*strs[i]);
    g_strfreev(a->sets);
    g_strfreev(a->hw_sets);
}

static bool fail(GError **err, const char *fmt, const char *what)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, fmt, what);
    return false;
}

/* The model: a preset or a file, then --set keys. */
static bool serve_model_of(const serve_args *a, strata_serve_model *m, GError **err)
{
    strata_serve_model_init(m);
    if (!a->model == !a->model_file)
        return fail(err, "expected one of --model NAME and --model-file FILE%s", "");
    if (a->model ? !strata_serve_model_preset(m, a->model, err) : !strata_serve_model_load(m, a->model_file, err))
        return false;
    for (char **s = a->sets; s && *s; s++) {
        char *eq = strchr(*s, '=');
        if (!eq)
            return fail(err, "--set: expected KEY=VALUE, got '%s'", *s);
        char *key = g_strndup(*s, (gsize)(eq - *s));
        bool ok = strata_serve_model_set(m, key, eq + 1, err);
        g_free(key);
        if (!ok) {
            g_prefix_error(err, "--set: ");
            return false;
        }
    }
    return strata_serve_model_check(m, a->model ? a->model : a->model_file, err);
}

static bool serve_config_of(const serve_args *a, strata_serve_config *c, GError **err)
{
    strata_serve_config_default(c);
    if (a->tp < 0 || a->max_seqs < 0 || a->max_tokens < 0 || a->block < 0 || a->concurrency < 0 || a->limit < 0 ||
        a->shared_prefix < 0)
        return fail(err, "expected counts >= 0 (--tp, --max-num-seqs, --max-num-batched-tokens, --block-size, "
                    "--concurrency, --limit, --shared-prefix)%s", "");
    c->tp = a->tp ? (uint32_t)a->tp : 1;
    if (a->max_seqs)
        c->max_num_seqs = (uint32_t)a->max_seqs;
    if (a->max_tokens)
        c->max_num_batched_tokens = (uint32_t)a->max_tokens;
    if (a->block)
        c->block_size = (uint32_t)a->block;
    if (c->max_num_batched_tokens > (1u << 20) || c->max_num_seqs > (1u << 20) || c->block_size > 4096)
        return fail(err, "expected --max-num-batched-tokens and --max-num-seqs <= 2^20, --block-size <= 4096%s", "");
    c->concurrency = (uint32_t)a->concurrency;
    if (a->util != 0)
        c->gpu_memory_utilization = a->util;
    if (!(c->gpu_memory_utilization > 0 && c->gpu_memory_utilization <= 1))
        return fail(err, "--gpu-memory-utilization: expected a fraction in (0, 1]%s", "");
    c->prefix_caching = !a->no_prefix;
    if (a->preemption && strcmp(a->preemption, "swap") != 0 && strcmp(a->preemption, "recompute") != 0)
        return fail(err, "--preemption: expected recompute or swap, got '%s'", a->preemption);
    c->swap = a->preemption && strcmp(a->preemption, "swap") == 0;
    if (a->step_overhead < 0)
        return fail(err, "--step-overhead: expected seconds >= 0%s", "");
    c->step_overhead = a->step_overhead;
    c->allocator = a->kv_allocator;
    if ((a->swap_space && !strata_parse_size(a->swap_space, &c->swap_space, err)) ||
        (a->kv_page && !strata_parse_size_above_zero(a->kv_page, &c->page_bytes, err)) ||
        (a->non_kv && !strata_parse_size(a->non_kv, &c->non_kv_overhead, err))) {
        g_prefix_error(err, "--swap-space/--kv-page/--non-kv-overhead: ");
        return false;
    }
    return true;
}

static strata_serve_stream *serve_stream_of(const serve_args *a, GError **err)
{
    strata_serve_stream *s = NULL;
    if (!a->requests == !a->poisson) {
        fail(err, "expected one of --requests CSV and --poisson n=N,rate=R,...%s", "");
        return NULL;
    }
    if (a->requests) {
        s = strata_serve_stream_load(a->requests, (uint32_t)a->limit, err);
    } else {
        strata_serve_poisson p;
        if (strata_serve_poisson_parse(a->poisson, &p, err))
            s = strata_serve_stream_poisson(&p);
    }
    if (s)
        s->shared_prefix = (uint32_t)a->shared_prefix;
    return s;
}

/* The schemes --kv names: one, a comma list, or all. */
static GPtrArray *serve_schemes_of(const char *kv, GError **err)
{
    GPtrArray *v = g_ptr_array_new();
    if (!kv || strcmp(kv, "all") == 0) {
        for (uint32_t i = 0; strata_serve_kv_at(i) && (kv || i == 0); i++)
            g_ptr_array_add(v, (gpointer)strata_serve_kv_at(i));
        return v;
    }
    char **names = g_strsplit(kv, ",", -1);
    for (char **n = names; *n; n++) {
        const strata_serve_kv_scheme *s = strata_serve_kv_find(*n);
        if (!s) {
            char *known = strata_serve_kv_names();
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv: unknown scheme '%s' (known: %s, or all)", *n,
                        known);
            g_free(known);
            g_ptr_array_free(v, TRUE);
            v = NULL;
            break;
        }
        g_ptr_array_add(v, (gpointer)s);
    }
    g_strfreev(names);
    return v;
}

static bool serve_all(strata_job *job, const serve_args *a, strata_outfile **json_out, GError **err)
{
    strata_serve_model m;
    strata_serve_config c;
    if (!a->hw)
        return fail(err, "expected --hw HW.ini%s", "");
    if (!serve_model_of(a, &m, err) || !serve_config_of(a, &c, err))
        return false;
    GPtrArray *schemes = serve_schemes_of(a->kv, err);
    strata_serve_stream *s = schemes ? serve_stream_of(a, err) : NULL;
    strata_hw *hw = s ? strata_hw_load(a->hw, (const char *const *)a->hw_sets, err) : NULL;
    GPtrArray *runs = g_ptr_array_new_with_free_func((GDestroyNotify)strata_serve_result_free);
    strata_progress *progress = strata_progress_new(strata_progress_stream(a->quiet));
    bool ok = hw != NULL;
    for (guint i = 0; ok && i < schemes->len; i++) {
        const strata_serve_kv_scheme *k = g_ptr_array_index(schemes, i);
        strata_job_doing(job, "serving %u requests with %s", s->n, k->name);
        strata_serve_result *r = strata_serve_run(hw, &m, &c, s, k, progress, err);
        ok = r != NULL;
        if (ok)
            g_ptr_array_add(runs, r);
    }
    strata_progress_free(progress);
    if (ok) {
        strata_serve_report rep = {&m, &c, strata_hw_name(hw), s->origin,
                                   (strata_serve_result *const *)runs->pdata, runs->len};
        strata_serve_report_print(&rep, strata_job_human(job));
        if (*json_out) {
            JsonNode *root = strata_serve_report_json(&rep);
            char *text = strata_json_text(root);
            ok = strata_job_commit_text(job, json_out, text, err);
            g_free(text);
            json_node_unref(root);
        }
    }
    g_ptr_array_free(runs, TRUE);
    strata_hw_free(hw);
    strata_serve_stream_free(s);
    if (schemes)
        g_ptr_array_free(schemes, TRUE);
    return ok;
}

int strata_cmd_serve(int argc, char **argv)
{
    serve_args a = {0};
    GOptionEntry entries[] = {
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.hw, "hardware model (its first device's unit and memory)", "HW.ini"},
        {"hw-set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.hw_sets, "override a hardware key (repeatable)",
         "KIND.NAME.KEY=V"},
        {"model", 'm', 0, G_OPTION_ARG_STRING, &a.model, "a preset model (list below)", "NAME"},
        {"model-file", 0, 0, G_OPTION_ARG_FILENAME, &a.model_file, "a model of 'key = value' lines", "FILE"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a.sets, "set a model key (repeatable)", "KEY=VALUE"},
        {"requests", 'r', 0, G_OPTION_ARG_FILENAME, &a.requests,
         "request CSV: TIMESTAMP,ContextTokens,GeneratedTokens (Azure) or arrival_s,prompt_tokens,output_tokens",
         "CSV"},
        {"limit", 0, 0, G_OPTION_ARG_INT, &a.limit, "serve the first N requests of --requests", "N"},
        {"poisson", 0, 0, G_OPTION_ARG_STRING, &a.poisson,
         "Poisson arrivals: n=, rate= (req/s, 0: all at once), prompt=, output= (means), dist=fixed|uniform|exp, "
         "spread=, seed=", "SPEC"},
        {"shared-prefix", 0, 0, G_OPTION_ARG_INT, &a.shared_prefix, "tokens every prompt shares (prefix caching)",
         "N"},
        {"concurrency", 0, 0, G_OPTION_ARG_INT, &a.concurrency,
         "closed loop: N clients, each sends its next request when one completes", "N"},
        {"tp", 0, 0, G_OPTION_ARG_INT, &a.tp, "tensor-parallel ranks (default 1)", "N"},
        {"kv", 0, 0, G_OPTION_ARG_STRING, &a.kv, "KV allocation scheme(s), comma-separated, or all (default paged)",
         "NAME"},
        {"kv-page", 0, 0, G_OPTION_ARG_STRING, &a.kv_page, "page of vattention/expandable (default 2MiB/20MiB)",
         "SIZE"},
        {"kv-allocator", 0, 0, G_OPTION_ARG_STRING, &a.kv_allocator, "allocator of the contiguous schemes "
         "(default best-fit)", "SPEC"},
        {"max-num-seqs", 0, 0, G_OPTION_ARG_INT, &a.max_seqs, "running requests at most (default 1024)", "N"},
        {"max-num-batched-tokens", 0, 0, G_OPTION_ARG_INT, &a.max_tokens, "tokens per step (default 8192)", "N"},
        {"block-size", 0, 0, G_OPTION_ARG_INT, &a.block, "tokens per KV block (default 16)", "N"},
        {"gpu-memory-utilization", 0, 0, G_OPTION_ARG_DOUBLE, &a.util, "share of device memory (default 0.9)", "F"},
        {"no-prefix-caching", 0, 0, G_OPTION_ARG_NONE, &a.no_prefix, "turn prefix caching off", NULL},
        {"preemption", 0, 0, G_OPTION_ARG_STRING, &a.preemption, "recompute (default) or swap", "MODE"},
        {"swap-space", 0, 0, G_OPTION_ARG_STRING, &a.swap_space, "host bytes per rank for swap (default 4GiB)",
         "SIZE"},
        {"step-overhead", 0, 0, G_OPTION_ARG_DOUBLE, &a.step_overhead, "seconds each step adds (default 0)", "S"},
        {"non-kv-overhead", 0, 0, G_OPTION_ARG_STRING, &a.non_kv, "bytes per rank kept from the KV pool (default 0)",
         "SIZE"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "write results JSON here ('-': standard output)", "OUT"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet, "no progress line on standard error", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char *presets = strata_serve_model_presets(), *keys = strata_serve_model_keys(), *kvs = strata_serve_kv_names();
    char *desc = g_strdup_printf("Models: %s\nModel keys: %s\nKV schemes: %s\n"
                                 "Exit status: 0 done, 2 bad input or usage.\n", presets, keys, kvs);
    strata_job *job = strata_job_new("serve", "- simulate serving a request stream (vLLM's scheduler)",
                                     "Continuous batching with chunked prefill over a paged KV cache (or another "
                                     "allocation scheme),\nstep times from the kernel models on the hardware model.",
                                     desc, entries);
    GError *err = NULL;
    strata_outfile *json_out = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 0, 0, NULL)) {
        strata_job_input(job, "--requests", a.requests);
        strata_job_input(job, "--model-file", a.model_file);
        if (strata_job_output(job, "--json", a.json, &json_out, &err) && serve_all(job, &a, &json_out, &err))
            status = STRATA_EXIT_OK;
    }
    status = strata_job_end(job, status, err);
    g_free(presets), g_free(keys), g_free(kvs), g_free(desc);
    serve_args_clear(&a);
    return status;
}
