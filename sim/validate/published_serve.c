/*
 * published_serve.c: published serving measurements (published.h, a case
 * with serve=): the serving metrics, their measured figures, and the
 * child's run of `strata serve` options on the case's hardware model.
 *
 * The case's serve= line is split as a shell would (quotes kept together)
 * and parsed with `strata serve`'s own options (serve/serve_args.h), less
 * those a case does not read (refused: --sweep, --json, --timeline, and
 * --hw, which is the case's hw=); a relative --requests or --model-file is taken
 * from the case file's folder, as hw= is. The figure is one run's, of one
 * --kv scheme (paged by default; a list or all is refused). A moe-layer case takes the model, --tp
 * and --attention-dp from the same options and times one MoE layer's
 * fused routed experts on its tokens (serve_cost.h), with no stream; a
 * decode-attention case, one layer's attention over its decodes, with
 * the decode kernel of --engine (serve_decode.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/opt_check.h"
#include "core/units.h"
#include "serve/serve_args.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_report.h"
#include "serve/serve_stream.h"
#include "validate/published.h"

typedef struct serve_metric {
    const char *name;
    strata_published_metric metric;
    const char *unit; /* a rate's suffix; NULL: a time */
} serve_metric;

static const serve_metric metrics[] = {
    {"output-throughput", STRATA_PUBLISHED_SERVE_OUTPUT_TOK_S, "tok/s"},
    {"request-throughput", STRATA_PUBLISHED_SERVE_REQ_S, "req/s"},
    {"tpot-p50", STRATA_PUBLISHED_SERVE_TPOT_P50, NULL},
    {"tpot-mean", STRATA_PUBLISHED_SERVE_TPOT_MEAN, NULL},
    {"itl-p50", STRATA_PUBLISHED_SERVE_ITL_P50, NULL},
    {"itl-mean", STRATA_PUBLISHED_SERVE_ITL_MEAN, NULL},
    {"ttft-p50", STRATA_PUBLISHED_SERVE_TTFT_P50, NULL},
    {"ttft-mean", STRATA_PUBLISHED_SERVE_TTFT_MEAN, NULL},
    {"moe-layer", STRATA_PUBLISHED_MOE_LAYER, NULL},
    {"decode-attention", STRATA_PUBLISHED_DECODE_ATTENTION, NULL},
};

static const serve_metric *metric_row(strata_published_metric m)
{
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        if (metrics[i].metric == m)
            return &metrics[i];
    return NULL;
}

bool strata_published_serve_metric(const char *name, strata_published_metric *m)
{
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        if (strcmp(metrics[i].name, name) == 0) {
            *m = metrics[i].metric;
            return true;
        }
    return false;
}

bool strata_published_serve_measured(strata_published_metric m, const char *text, double *value)
{
    const serve_metric *row = metric_row(m);
    if (!row)
        return false;
    if (!row->unit)
        return strata_parse_time(text, value, NULL) && *value > 0;
    if (!g_str_has_suffix(text, row->unit))
        return false;
    char *number = g_strndup(text, strlen(text) - strlen(row->unit));
    bool ok = strata_serve_decimal(number, value) && *value > 0; /* decimal: strtod read 0x10tok/s as 16 */
    g_free(number);
    return ok;
}

char *strata_published_serve_format(strata_published_metric m, double v)
{
    const serve_metric *row = metric_row(m);
    if (row && row->unit)
        return g_strdup_printf("%.2f %s", v, row->unit);
    return strata_format_time(v);
}

static double metric_value(strata_published_metric m, const strata_serve_result *r)
{
    switch (m) {
    case STRATA_PUBLISHED_SERVE_OUTPUT_TOK_S:
        return r->output_tok_s;
    case STRATA_PUBLISHED_SERVE_REQ_S:
        return r->req_s;
    case STRATA_PUBLISHED_SERVE_TPOT_P50:
        return r->tpot.p50;
    case STRATA_PUBLISHED_SERVE_TPOT_MEAN:
        return r->tpot.mean;
    case STRATA_PUBLISHED_SERVE_ITL_P50:
        return r->itl.p50;
    case STRATA_PUBLISHED_SERVE_ITL_MEAN:
        return r->itl.mean;
    case STRATA_PUBLISHED_SERVE_TTFT_P50:
        return r->ttft.p50;
    case STRATA_PUBLISHED_SERVE_TTFT_MEAN:
        return r->ttft.mean;
    default:
        return NAN;
    }
}

/* A relative path of the case's options, from the case file's folder. */
static void from_case_dir(char **path, const char *where)
{
    if (!*path || g_path_is_absolute(*path))
        return;
    char *file = g_strndup(where, strcspn(where, ":"));
    char *dir = g_path_get_dirname(file);
    char *full = g_build_filename(dir, *path, NULL);
    g_free(*path);
    *path = full;
    g_free(dir);
    g_free(file);
}

/* Whether the option e writes was given (strata_serve_args_entries sets its integers to STRATA_SERVE_UNSET). */
static bool entry_given(const GOptionEntry *e)
{
    switch (e->arg) {
    case G_OPTION_ARG_NONE:
        return *(gboolean *)e->arg_data;
    case G_OPTION_ARG_INT:
        return *(gint *)e->arg_data != STRATA_SERVE_UNSET;
    case G_OPTION_ARG_STRING_ARRAY:
    case G_OPTION_ARG_FILENAME_ARRAY:
        return *(char ***)e->arg_data != NULL;
    default:
        return *(char **)e->arg_data != NULL;
    }
}

/* A moe-layer or decode-attention case is one cost model's figure (cost_child): it reads the model (--model,
 * --model-file, --config, --set), --tp, --attention-dp and --hw-set, and a decode-attention case --engine's
 * decode kernel; --requests and --poisson are refused by cost_child, -q prints nothing either way. Any other
 * option was parsed and dropped at exit 0 (--clock peak, --engine-release 0.6.6, --kv all, --concurrency 3: the
 * same figure); refused, named. Options added to `strata serve` later are refused here until read. */
static bool cost_case_options(const strata_published_case *c, const GOptionEntry *entries, GError **err)
{
    static const char *const read[] = {"model", "model-file", "config", "set", "tp", "attention-dp", "hw-set",
                                       "requests", "poisson", "quiet", NULL};
    bool decode = c->metric == STRATA_PUBLISHED_DECODE_ATTENTION;
    for (const GOptionEntry *e = entries; e->long_name; e++) {
        if (!entry_given(e) || g_strv_contains(read, e->long_name) || (decode && !strcmp(e->long_name, "engine")))
            continue;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--%s: a %s case is one cost model's figure, no "
                    "serving run: expected only --model, --model-file, --config, --set, --tp, --attention-dp"
                    "%s, which it reads", e->long_name, decode ? "decode-attention" : "moe-layer",
                    decode ? ", --hw-set and --engine (its decode kernel)" : " and --hw-set");
        return false;
    }
    return true;
}

static bool parse_options(const strata_published_case *c, strata_serve_args *a, GError **err)
{
    char **words = NULL;
    int n = 0;
    if (!g_shell_parse_argv(c->serve, &n, &words, err))
        return false;
    char **argv = g_new0(char *, (gsize)n + 2);
    argv[0] = g_strdup("serve");
    for (int i = 0; i < n; i++)
        argv[i + 1] = words[i];
    g_free(words);
    GOptionEntry *entries = strata_serve_args_entries(a);
    GOptionContext *ctx = g_option_context_new(NULL);
    g_option_context_set_help_enabled(ctx, FALSE);
    g_option_context_add_main_entries(ctx, entries, NULL);
    /* the command line's rules (opt_check.h): an option twice, `--tp 010`
     * (octal 8 to GOption), refused here as by `strata serve` */
    char *bad = NULL;
    bool ok = strata_opt_check(entries, n + 1, argv, false, &bad);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s", bad);
    g_free(bad);
    ok = ok && g_option_context_parse_strv(ctx, &argv, err); /* frees what it removes */
    if (ok && argv[0] && argv[1]) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected options only, got '%s'", argv[1]);
        ok = false;
    }
    /* what a case does not read (each was parsed and dropped, exit 0: --sweep tp=1,2 ran no point but the
     * first's, --json wrote nothing, --hw named a file never opened) */
    const char *unread = !ok ? NULL : a->sweep ? "--sweep" : a->json ? "--json" : a->timeline ? "--timeline"
                                    : a->hw    ? "--hw"    : NULL;
    if (unread) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a case is one run on its hw= and writes no "
                    "file: expected no --sweep, --json, --timeline or --hw", unread);
        ok = false;
    }
    bool cost = c->metric == STRATA_PUBLISHED_MOE_LAYER || c->metric == STRATA_PUBLISHED_DECODE_ATTENTION;
    if (ok && cost)
        ok = cost_case_options(c, entries, err);
    g_option_context_free(ctx);
    g_free(entries);
    g_strfreev(argv);
    from_case_dir(&a->requests, c->where);
    from_case_dir(&a->model_file, c->where);
    from_case_dir(&a->config, c->where);
    return ok;
}

/* A decode-attention case's figure: one layer's attention over c->tokens
 * decodes of c->context tokens each, the engine's decode kernel. */
static double decode_attention(const strata_published_case *c, const strata_serve_args *a, strata_serve_cost *cost,
                               GError **err)
{
    const strata_serve_engine *e = a->engine ? strata_serve_engine_find(a->engine, err) : NULL;
    const strata_serve_decode_kernel *k = e && e->decode ? strata_serve_decode_find(e->decode, err) : NULL;
    if (a->engine && (!e || (e->decode && !k)))
        return NAN;
    strata_serve_cost_set_decode(cost, k);
    strata_serve_chunk *chunks = g_new(strata_serve_chunk, c->tokens);
    for (uint64_t i = 0; i < c->tokens; i++)
        chunks[i] = (strata_serve_chunk){(uint32_t)i, 1, (uint32_t)c->context, true};
    strata_serve_work work;
    double v = strata_serve_cost_attention(cost, chunks, (uint32_t)c->tokens, 0, &work);
    g_free(chunks);
    return v;
}

/* A decode-attention case's context past the model's longest sequence, the error line naming context='s line;
 * NULL when within it or when the model gives none. The bound: the max_model_len its preset, model file or --set
 * gives, else a config.json's derived length (max_position_embeddings, serve_model.h max_positions); strata's
 * serving default 8192 is no model's: the shipped Llama 3.x cases (decode-attention*.ini, presets without
 * max_model_len) decode at up to 131,072 tokens, Llama 3.1's context. */
static char *context_past_model(const strata_published_case *c, const strata_serve_model *m)
{
    uint32_t limit = m->max_model_len_given ? m->max_model_len : m->max_positions;
    if (c->metric != STRATA_PUBLISHED_DECODE_ATTENTION || !limit || c->context <= limit)
        return NULL;
    return g_strdup_printf("error %s: [case %s] context: expected at most %u tokens, the max_model_len of %s (serve= "
                           "on %s), got %" G_GUINT64_FORMAT, c->context_where, c->name, limit, m->name,
                           c->serve_where, c->context);
}

/* A moe-layer case (one MoE layer's routed experts on c->tokens tokens)
 * or a decode-attention case: a cost model's figure, no request stream. */
static char *cost_child(const strata_published_case *c, const strata_serve_args *a)
{
    GError *err = NULL;
    strata_serve_model m;
    strata_hw *hw = NULL;
    strata_serve_cost *cost = NULL;
    char *line = NULL;
    uint32_t tp = 1;
    bool moe = c->metric == STRATA_PUBLISHED_MOE_LAYER;
    if (a->requests || a->poisson)
        line = g_strdup_printf("error %s: serve: a %s case takes no request stream (--requests, --poisson)", c->serve_where,
                               moe ? "moe-layer" : "decode-attention");
    else if (strata_serve_args_tp(a, &tp, &err) && strata_serve_args_model(a, &m, &err) &&
             !(line = context_past_model(c, &m)) &&
             (hw = strata_hw_load(c->hw, (const char *const *)a->hw_sets, &err)) &&
             (cost = strata_serve_cost_new(hw, &m, tp, a->attention_dp, 0, &err))) {
        double v = moe ? strata_serve_cost_moe_experts(cost, c->tokens, NULL) : decode_attention(c, a, cost, &err);
        if (v > 0)
            line = g_strdup_printf("ok %.17g", v);
        else if (moe)
            line = g_strdup_printf("error %s: serve: the model has no routed experts (experts=, top_k=)", c->serve_where);
        else if (!err)
            line = g_strdup_printf("error %s: serve: the decodes' attention takes no time", c->serve_where);
    }
    if (!line)
        line = g_strdup_printf("error %s: serve: %s", c->serve_where, err ? err->message : "failed");
    g_clear_error(&err);
    strata_serve_cost_free(cost);
    strata_hw_free(hw);
    return line;
}

char *strata_published_serve_child(const strata_published_case *c)
{
    strata_serve_args a = {0};
    strata_serve_setup set = {0};
    GError *err = NULL;
    char *line = NULL;
    strata_serve_result *r = NULL;
    if (c->metric == STRATA_PUBLISHED_MOE_LAYER || c->metric == STRATA_PUBLISHED_DECODE_ATTENTION) {
        line = parse_options(c, &a, &err) ? cost_child(c, &a) : NULL;
    } else if (parse_options(c, &a, &err) && strata_serve_setup_make(&set, &a, c->hw, &err)) {
        /* one run, the first scheme's: --kv all or a list ran no other (each parsed, dropped at exit 0) */
        if (set.schemes->len > 1)
            g_set_error(&err, STRATA_ERROR, STRATA_ERROR_INPUT, "--kv %s: a case is one run: expected one KV "
                        "scheme, got %u", a.kv, set.schemes->len);
        else
            r = strata_serve_run(set.hw, &set.model, &set.config, set.stream, g_ptr_array_index(set.schemes, 0),
                                 NULL, &err);
        if (r)
            strata_serve_report_refused(stderr, c->where, r, set.stream, &set.config, set.model.max_model_len);
        double v = r ? metric_value(c->metric, r) : NAN;
        if (r && !(v > 0))
            line = g_strdup_printf("error %s: the serving run gives no figure (%u of %u requests completed)",
                                   c->where, r->completed, r->requests);
        else if (r)
            line = g_strdup_printf("ok %.17g", v);
    }
    if (!line)
        line = g_strdup_printf("error %s: serve: %s", c->serve_where, err ? err->message : "failed");
    g_clear_error(&err);
    strata_serve_result_free(r);
    strata_serve_setup_clear(&set);
    strata_serve_args_clear(&a);
    return line;
}
