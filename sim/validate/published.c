/*
 * published.c: reading case files and simulating their cases (published.h).
 *
 * A case runs in a forked child that loads the hardware, opens the trace
 * (or generates the workload; on a model of several devices, through the
 * SPMD expansion, as `strata run` does), runs the engine and writes one
 * line back through a pipe: "ok VALUE" or "error MESSAGE". The parent never starts an engine, so any number of
 * cases run from one process. The child takes the signals again that the
 * command's interrupt watcher (core/interrupt.h) blocked, and gets SIGTERM
 * when the parent dies, so an interrupted validation ends its case too.
 */
#include "validate/published.h"
#include <errno.h>
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/interrupt.h"
#include "core/keyfile.h"
#include "core/units.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "runspec/runspec.h"
#include "trace/check.h"
#include "validate/series.h"
#include "workload/workload.h"

struct strata_published {
    GPtrArray *cases; /* strata_published_case *, owned */
};

static void case_free(gpointer p)
{
    strata_published_case *c = p;
    if (!c)
        return;
    g_free(c->name);
    g_free(c->where);
    g_free(c->source);
    g_free(c->setup);
    g_free(c->note);
    g_free(c->group);
    g_free(c->hw);
    g_free(c->trace);
    g_free(c->gen);
    g_strfreev(c->set);
    g_free(c->set_where);
    g_free(c->serve);
    g_free(c->serve_where);
    g_free(c->context_where);
    g_free(c);
}

strata_published *strata_published_new(void)
{
    strata_published *set = g_new0(strata_published, 1);
    set->cases = g_ptr_array_new_with_free_func(case_free);
    return set;
}

void strata_published_free(strata_published *set)
{
    if (!set)
        return;
    g_ptr_array_free(set->cases, TRUE);
    g_free(set);
}

size_t strata_published_count(const strata_published *set)
{
    return set->cases->len;
}

const strata_published_case *strata_published_case_at(const strata_published *set, size_t i)
{
    return g_ptr_array_index(set->cases, i);
}

static bool bad_key(const strata_keyfile *kf, const char *group, const char *key, const char *what, GError **err)
{
    char *where = strata_keyfile_where(kf, group, key);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] %s: %s", where, group, key, what);
    g_free(where);
    return false;
}

/* The value of a required key, or NULL with err set. */
static char *required(const strata_keyfile *kf, const char *group, const char *key, GError **err)
{
    char *v = strata_keyfile_string(kf, group, key);
    if (v && *v)
        return v;
    g_free(v);
    if (strata_keyfile_has_key(kf, group, key)) {
        bad_key(kf, group, key, "expected a value", err);
    } else {
        char *where = strata_keyfile_where(kf, group, NULL);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] has no %s= (required)", where, group, key);
        g_free(where);
    }
    return NULL;
}

/* A path relative to the case file's folder, which must be a readable file (not a folder). */
static char *case_path(const strata_keyfile *kf, const char *group, const char *key, const char *dir, GError **err)
{
    char *v = required(kf, group, key, err);
    if (!v)
        return NULL;
    char *path = g_path_is_absolute(v) ? g_strdup(v) : g_build_filename(dir, v, NULL);
    g_free(v);
    bool folder = g_file_test(path, G_FILE_TEST_IS_DIR); /* readable too: refused here, not by the reader */
    if (folder || access(path, R_OK) != 0) {
        char *what = g_strdup_printf("cannot read %s (%s)", path, g_strerror(folder ? EISDIR : errno));
        bad_key(kf, group, key, what, err);
        g_free(what);
        g_free(path);
        return NULL;
    }
    return path;
}

/* nccl-tests' bus bandwidth factor of a collective over n ranks (n >= 2):
 * how many times each byte of the buffer crosses a rank's busiest link. */
static bool busbw_factor(const char *op, uint64_t n, double *factor)
{
    if (strcmp(op, "all-reduce") == 0)
        *factor = 2.0 * (double)(n - 1) / (double)n;
    else if (strcmp(op, "all-gather") == 0 || strcmp(op, "reduce-scatter") == 0 || strcmp(op, "all-to-all") == 0)
        *factor = (double)(n - 1) / (double)n;
    else if (strcmp(op, "collective-permute") == 0)
        *factor = 1;
    else
        return false;
    return true;
}

/* collective= and ranks= of a busbw case, into c->busbw_factor. */
static bool case_collective(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    char *op = required(kf, group, "collective", err);
    char *ranks = op ? required(kf, group, "ranks", err) : NULL;
    uint64_t n = 0;
    bool ok = ranks != NULL;
    if (ok && !(strata_parse_u64(ranks, &n, NULL) && n >= 2 && n <= 1u << 20))
        ok = bad_key(kf, group, "ranks", "expected the group size, a whole number from 2", err);
    if (ok && !busbw_factor(op, n, &c->busbw_factor))
        ok = bad_key(kf, group, "collective",
                     "expected all-reduce, all-gather, reduce-scatter, all-to-all or collective-permute", err);
    g_free(op);
    g_free(ranks);
    return ok;
}

/* metric= (with collective= and ranks= for busbw). */
static bool case_metric(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    char *metric = required(kf, group, "metric", err);
    bool ok = metric != NULL;
    if (ok && strcmp(metric, "makespan") == 0)
        c->metric = STRATA_PUBLISHED_MAKESPAN;
    else if (ok && strcmp(metric, "bandwidth") == 0)
        c->metric = STRATA_PUBLISHED_BANDWIDTH;
    else if (ok && strcmp(metric, "busbw") == 0)
        c->metric = STRATA_PUBLISHED_BUSBW;
    else if (ok && !strata_published_serve_metric(metric, &c->metric))
        ok = bad_key(kf, group, "metric", "expected makespan, bandwidth or busbw (or, with serve=, output-throughput, "
                     "request-throughput, tpot-p50, tpot-mean, itl-p50, itl-mean, ttft-p50, ttft-mean, moe-layer or "
                     "decode-attention)", err);
    g_free(metric);
    if (ok && c->metric == STRATA_PUBLISHED_BUSBW)
        return case_collective(c, kf, group, err);
    for (const char *const *k = (const char *const[]){"collective", "ranks", NULL}; ok && *k; k++)
        if (strata_keyfile_has_key(kf, group, *k))
            ok = bad_key(kf, group, *k, "only metric busbw names a collective", err);
    return ok;
}

/* A measured figure of the case's metric from text ("3.6s", "9.6GB/s"). */
static bool parse_measured(strata_published_metric metric, const char *text, double *value)
{
    if (metric > STRATA_PUBLISHED_BUSBW)
        return strata_published_serve_measured(metric, text, value);
    bool ok = metric == STRATA_PUBLISHED_MAKESPAN ? strata_parse_time(text, value, NULL)
                                                  : strata_parse_bandwidth(text, value, NULL);
    return ok && *value > 0;
}

/* Whether metric's figure is a time (makespan, serving latencies), not a
 * bandwidth or a serving rate (the enum's order, published.h). */
static bool metric_is_time(strata_published_metric metric)
{
    return metric == STRATA_PUBLISHED_MAKESPAN || metric > STRATA_PUBLISHED_SERVE_REQ_S;
}

/* The range a measured figure of metric lies in, NULL when value does:
 * a time of at least 1 ns (two cycles of a 2 GHz clock: no kernel, copy or
 * collective a source times completes sooner; below it, 1e-300s or a
 * subnormal, the error is a unit slip's, 1e301 %) and at most 10^9 s, the
 * latest time a trace can name (STRATA_TRACE_MAX_AT_S), a bandwidth within the
 * range hardware files take (STRATA_HW_BANDWIDTH_MIN to _MAX, hw.h), a serving
 * rate of at least 0.001 a second (one request or token in 1000 s) and at
 * most 10^9 a second (one a nanosecond, the reciprocal of a time's floor;
 * the highest in validation/serving is below 10^5 tok/s). */
static const char *measured_range(strata_published_metric metric, double value)
{
    if (metric_is_time(metric) && value > STRATA_TRACE_MAX_AT_S) /* 1e300s was taken, its error 100 %, exit 0 */
        return "expected a measured time of at most 1e9 s (a trace's latest timestamp, trace/check.h)";
    if (metric_is_time(metric))
        return value >= 1e-9 ? NULL : "expected a measured time of at least 1ns (two cycles of a 2 GHz clock)";
    if (metric > STRATA_PUBLISHED_BUSBW && value > 1e9) /* 1e300tok/s was taken, its error 100 %, exit 0 */
        return "expected a measured rate of at most 1e9 a second (one token or request a nanosecond, a time's "
               "floor)";
    if (metric > STRATA_PUBLISHED_BUSBW)
        return value >= 1e-3 ? NULL : "expected a measured rate of at least 0.001 a second";
    if (value >= STRATA_HW_BANDWIDTH_MIN && value <= STRATA_HW_BANDWIDTH_MAX)
        return NULL;
    return "expected a measured bandwidth from 1kB/s to 10PB/s (the range hardware files take)";
}

/* measured= and bytes= of one case (metric= already read). */
static bool case_measure(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    char *measured = required(kf, group, "measured", err);
    bool ok = measured != NULL;
    if (ok && !parse_measured(c->metric, measured, &c->measured)) {
        /* the unit the metric takes named (request-throughput's 5tok/s was told "such as 6744tok/s or
         * 37.03req/s"), and what was given */
        const char *rate_req = "expected a rate above 0 in req/s (request-throughput's unit) such as 37.03req/s";
        const char *rate_tok = "expected a rate above 0 in tok/s (output-throughput's unit) such as 6744tok/s";
        char *what = g_strdup_printf("%s, got '%s'", metric_is_time(c->metric) ? "expected a time above 0 such as 3.6s"
                                     : c->metric == STRATA_PUBLISHED_SERVE_REQ_S        ? rate_req
                                     : c->metric == STRATA_PUBLISHED_SERVE_OUTPUT_TOK_S ? rate_tok
                                     : "expected a bandwidth above 0 such as 9.6GB/s", measured);
        ok = bad_key(kf, group, "measured", what, err);
        g_free(what);
    }
    const char *range = ok ? measured_range(c->metric, c->measured) : NULL;
    if (range) {
        char *what = g_strdup_printf("%s, got %s", range, measured);
        ok = bad_key(kf, group, "measured", what, err);
        g_free(what);
    }
    g_free(measured);
    if (ok && (c->metric == STRATA_PUBLISHED_MAKESPAN || c->metric > STRATA_PUBLISHED_BUSBW)) {
        if (strata_keyfile_has_key(kf, group, "bytes"))
            ok = bad_key(kf, group, "bytes", "only metrics bandwidth and busbw count bytes", err);
    } else if (ok) {
        char *bytes = required(kf, group, "bytes", err);
        ok = bytes != NULL;
        if (ok && !(strata_parse_size(bytes, &c->bytes, NULL) && c->bytes > 0))
            ok = bad_key(kf, group, "bytes", "expected a size above 0 such as 32000000 or 512MiB", err);
        g_free(bytes);
    }
    return ok;
}

/* trace=, gen= or serve= (exactly one; a series has only gen; serve= goes
 * with a serve metric and only with one). */
static bool case_program(strata_published_case *c, const strata_keyfile *kf, const char *group, const char *dir,
                         bool series, GError **err)
{
    bool has_trace = strata_keyfile_has_key(kf, group, "trace"), has_gen = strata_keyfile_has_key(kf, group, "gen");
    bool serve_metric = c->metric > STRATA_PUBLISHED_BUSBW;
    if (!series && (serve_metric || strata_keyfile_has_key(kf, group, "serve"))) {
        if (has_trace || has_gen)
            return bad_key(kf, group, has_trace ? "trace" : "gen", "a serve= case takes neither trace= nor gen=", err);
        if (!serve_metric)
            return bad_key(kf, group, "metric", "serve= expects a serving metric such as output-throughput", err);
        if (c->set)
            return bad_key(kf, group, "set", "a serve= case takes its hardware overrides as --hw-set in serve=", err);
        c->serve_where = strata_keyfile_has_key(kf, group, "serve") ? strata_keyfile_where(kf, group, "serve") : NULL;
        return (c->serve = required(kf, group, "serve", err)) != NULL;
    }
    if (series || has_gen) {
        if (has_trace)
            return bad_key(kf, group, "trace", "give either trace= or gen=, not both", err);
        c->gen = required(kf, group, "gen", err);
        char *workload = c->gen ? g_strndup(c->gen, strcspn(c->gen, " \t")) : NULL;
        bool known = workload && strata_workload_type_find(workload);
        g_free(workload);
        if (c->gen && !known)
            return bad_key(kf, group, "gen", "expected a workload of `strata gen --list` and its key=value arguments",
                           err);
        return c->gen != NULL;
    }
    return (c->trace = case_path(kf, group, "trace", dir, err)) != NULL;
}

/* The parameters of gen= when it is `strata gen collective` and the
 * generator takes its arguments, else NULL (gen= the generator refuses is
 * left to the run, which names it). */
static strata_params *gen_collective_params(const char *gen)
{
    char **words = g_strsplit_set(gen, " \t", -1);
    GPtrArray *args = g_ptr_array_new();
    for (char **w = words + 1; words[0] && *w; w++)
        if (**w)
            g_ptr_array_add(args, *w);
    const strata_workload_type *type = words[0] ? strata_workload_type_find(words[0]) : NULL;
    strata_params *p = type && strcmp(words[0], "collective") == 0
                           ? strata_workload_params_args(type, (int)args->len, (const char *const *)args->pdata, NULL)
                           : NULL;
    g_ptr_array_free(args, TRUE);
    g_strfreev(words);
    return p;
}

/* A busbw case whose gen= is `collective`: its devices= and op= (or
 * their defaults) are ranks= and collective=, which make the busbw factor
 * (ranks = 8 beside devices=16 scaled the simulated all-reduce by 2 x 7/8,
 * not 2 x 15/16, at exit 0). */
static bool case_gen_collective(const strata_published_case *c, const strata_params *gen, const strata_keyfile *kf,
                                const char *group, GError **err)
{
    const strata_params *p = c->metric == STRATA_PUBLISHED_BUSBW ? gen : NULL;
    char *ranks = p ? strata_keyfile_string(kf, group, "ranks") : NULL;
    char *op = p ? strata_keyfile_string(kf, group, "collective") : NULL;
    uint64_t n = 0;
    bool ok = true;
    if (p && strata_parse_u64(ranks, &n, NULL) && (int64_t)n != strata_params_int(p, "devices")) {
        char *what = g_strdup_printf("expected the devices of gen= (%" G_GINT64_FORMAT "), got %s: busbw scales by "
                                     "the group's size", strata_params_int(p, "devices"), ranks);
        ok = bad_key(kf, group, "ranks", what, err);
        g_free(what);
    } else if (p && op && strcmp(op, strata_params_string(p, "op")) != 0) {
        char *what = g_strdup_printf("expected the op of gen= (%s), got %s", strata_params_string(p, "op"), op);
        ok = bad_key(kf, group, "collective", what, err);
        g_free(what);
    }
    g_free(ranks);
    g_free(op);
    return ok;
}

/* A bandwidth or busbw [case] whose gen= is `collective`: its bytes= (or
 * its default) is the case's bytes=, which divides the simulated time
 * (bytes = 1GiB beside gen= bytes=8GiB gave an eighth of the bandwidth,
 * exit 0). A series sets both from its row. */
static bool case_gen_bytes(const strata_published_case *c, const strata_params *gen, const strata_keyfile *kf,
                           const char *group, GError **err)
{
    bool ok = true;
    if (gen && strata_params_size(gen, "bytes") != c->bytes) {
        char *what = g_strdup_printf("expected the bytes of gen= (%" G_GUINT64_FORMAT "), got %" G_GUINT64_FORMAT,
                                     strata_params_size(gen, "bytes"), c->bytes);
        ok = bad_key(kf, group, "bytes", what, err);
        g_free(what);
    }
    return ok;
}

/* group = WORD, or the metric's default (published.h). */
static bool case_group(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    if (!strata_keyfile_has_key(kf, group, "group")) {
        c->group = g_strdup(c->metric == STRATA_PUBLISHED_BUSBW ? "collectives" : "other");
        return true;
    }
    c->group = strata_keyfile_string(kf, group, "group");
    bool ok = c->group && *c->group;
    for (const char *p = c->group; ok && *p; p++)
        ok = g_ascii_isalnum(*p) || *p == '-';
    return ok || bad_key(kf, group, "group", "expected a word of letters, digits and '-' such as host-link", err);
}

/* The keys a case and a series share: source, setup, note, metric, hw, and
 * trace or gen; every key of the group must be one of known. */
/* The case's common keys; *gen (may be NULL): the parameters of its gen=
 * when it is a bandwidth or busbw case of `strata gen collective`
 * (gen_collective_params; strata_params_free), else NULL. */
static strata_published_case *case_common(const strata_keyfile *kf, const char *group, const char *name,
                                          const char *dir, const char *const *known, strata_params **gen,
                                          GError **err)
{
    if (gen)
        *gen = NULL;
    if (!strata_keyfile_check_keys(kf, group, known, NULL, err))
        return NULL;
    bool series = g_str_has_prefix(group, "series ");
    strata_published_case *c = g_new0(strata_published_case, 1);
    c->name = g_strdup(name);
    c->where = strata_keyfile_where(kf, group, NULL);
    c->simulated = NAN;
    c->note = strata_keyfile_string(kf, group, "note");
    char *set = strata_keyfile_string(kf, group, "set");
    c->set = set ? g_strsplit_set(g_strstrip(set), " \t", -1) : NULL;
    for (guint i = 0, j = 0; c->set && (i == 0 || c->set[i - 1]); i++) /* drop the empty words */
        if (!c->set[i] || *c->set[i])
            c->set[j++] = c->set[i];
        else
            g_free(c->set[i]);
    c->set_where = set ? strata_keyfile_where(kf, group, "set") : NULL;
    g_free(set);
    bool ok = !c->set || *c->set || /* "set =" overrode nothing, silently */
              bad_key(kf, group, "set", "expected KIND.NAME.KEY=VALUE overrides separated by blanks, got none", err);
    ok = ok && (c->source = required(kf, group, "source", err)) && (c->setup = required(kf, group, "setup", err)) &&
              case_metric(c, kf, group, err) && case_group(c, kf, group, err) &&
              (c->hw = case_path(kf, group, "hw", dir, err)) && case_program(c, kf, group, dir, series, err);
    bool counted = c->metric == STRATA_PUBLISHED_BANDWIDTH || c->metric == STRATA_PUBLISHED_BUSBW;
    strata_params *p = ok && counted && c->gen ? gen_collective_params(c->gen) : NULL;
    ok = ok && case_gen_collective(c, p, kf, group, err);
    if (ok && gen)
        *gen = p;
    else if (p)
        strata_params_free(p);
    if (!ok) {
        case_free(c);
        return NULL;
    }
    return c;
}

static bool add_case(strata_published *set, strata_published_case *c, GError **err)
{
    for (guint j = 0; j < set->cases->len; j++)
        if (strcmp(((strata_published_case *)g_ptr_array_index(set->cases, j))->name, c->name) == 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: case '%s' is already defined", c->where,
                        c->name);
            case_free(c);
            return false;
        }
    g_ptr_array_add(set->cases, c);
    return true;
}

/* A whole number from 1 to max (its name: bound) under key, required when
 * `wanted`, refused (`only` saying which metrics take it) when not. */
static bool case_count(const strata_keyfile *kf, const char *group, const char *key, bool wanted, const char *only,
                       uint64_t max, const char *bound, uint64_t *value, GError **err)
{
    if (!wanted)
        return !strata_keyfile_has_key(kf, group, key) || bad_key(kf, group, key, only, err);
    char *text = required(kf, group, key, err);
    bool ok = text != NULL;
    if (ok && !(strata_parse_u64(text, value, NULL) && *value > 0 && *value <= max)) {
        /* the bound and the value named (tokens = 99999999999 was told "from 1") */
        char *what = g_strdup_printf("expected a whole number of tokens from 1 to %" G_GUINT64_FORMAT " (%s), got "
                                     "'%s'", max, bound, text);
        ok = bad_key(kf, group, key, what, err);
        g_free(what);
    }
    g_free(text);
    return ok;
}

/* tokens= of a moe-layer or decode-attention case, context= of the
 * latter (and of no other). tokens at most 2^24 (16,777,216): a
 * decode-attention case holds a 16 B chunk a decode (published_serve.c
 * decode_attention: 2^24 are 256 MiB; 2^32 - 1 were 64 GiB, g_new's abort,
 * not exit 2), the bound --kv-blocks takes (serve_args.c); a moe-layer
 * case's tokens are one forward pass's, far below it (the shipped cases
 * reach 16,384). context: at most 2^32 - 1 (the cost model's uint32 chunk
 * length), and at most the model's max_model_len where the model gives
 * one (published_serve.c cost_child, once serve= has named the model). */
static bool case_tokens(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    bool decode = c->metric == STRATA_PUBLISHED_DECODE_ATTENTION;
    if (decode && strata_keyfile_has_key(kf, group, "context"))
        c->context_where = strata_keyfile_where(kf, group, "context");
    return case_count(kf, group, "tokens", decode || c->metric == STRATA_PUBLISHED_MOE_LAYER,
                      "only metrics moe-layer and decode-attention take tokens", 1u << 24, "2^24", &c->tokens, err) &&
           case_count(kf, group, "context", decode, "only metric decode-attention takes context", UINT32_MAX,
                      "2^32 - 1", &c->context, err);
}

static bool case_read(strata_published *set, const strata_keyfile *kf, const char *group, const char *name,
                      const char *dir, GError **err)
{
    static const char *const known[] = {"source", "setup", "measured", "metric", "bytes", "collective", "ranks", "hw",
                                        "trace",  "gen",   "note",     "group",  "set",   "serve",      "tokens", "context", NULL};
    strata_params *gen;
    strata_published_case *c = case_common(kf, group, name, dir, known, &gen, err);
    if (c && !(case_measure(c, kf, group, err) && case_tokens(c, kf, group, err) &&
               case_gen_bytes(c, gen, kf, group, err))) {
        case_free(c);
        c = NULL;
    }
    if (gen)
        strata_params_free(gen);
    return c && add_case(set, c, err);
}

/* One case per row of the series' data file. */
static bool series_read(strata_published *set, const strata_keyfile *kf, const char *group, const char *name,
                        const char *dir, GError **err)
{
    static const char *const known[] = {"source", "setup", "metric", "collective", "ranks", "hw",
                                        "gen",    "note",  "data",   "column",     "unit",  "group", "set", NULL};
    strata_published_case *t = case_common(kf, group, name, dir, known, NULL, err);
    char *data = t ? case_path(kf, group, "data", dir, err) : NULL;
    char *column = data ? required(kf, group, "column", err) : NULL;
    char *unit = column ? required(kf, group, "unit", err) : NULL;
    char *one = unit ? g_strconcat("1", unit, NULL) : NULL;
    double scale = 0;
    bool ok = one != NULL;
    if (ok && !parse_measured(t->metric, one, &scale))
        ok = bad_key(kf, group, "unit",
                     t->metric == STRATA_PUBLISHED_MAKESPAN ? "expected a time unit such as us"
                                                            : "expected a bandwidth unit such as GB/s",
                     err);
    GArray *rows = ok ? strata_series_read(data, column, err) : NULL;
    for (guint i = 0; rows && ok && i < rows->len; i++) {
        const strata_series_row *r = &g_array_index(rows, strata_series_row, i);
        strata_published_case *c = g_memdup2(t, sizeof *t);
        char *size = strata_format_size_exact(r->bytes);
        c->name = g_strdup_printf("%s %s", name, size);
        c->where = g_strdup_printf("%s:%u", data, r->line);
        c->source = g_strdup(t->source), c->setup = g_strdup(t->setup), c->note = g_strdup(t->note);
        c->group = g_strdup(t->group);
        c->hw = g_strdup(t->hw);
        c->set = g_strdupv(t->set);
        c->set_where = g_strdup(t->set_where);
        c->gen = g_strdup_printf("%s bytes=%" G_GUINT64_FORMAT, t->gen, r->bytes);
        c->trace = NULL;
        c->bytes = r->bytes;
        c->measured = r->value * scale;
        g_free(size);
        const char *range = measured_range(c->metric, c->measured);
        if (range) { /* the row's figure in the series' unit */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s: %s, got %g%s", c->where, column, range,
                        r->value, unit);
            case_free(c);
            ok = false;
        } else {
            ok = add_case(set, c, err);
        }
    }
    ok = ok && rows != NULL;
    if (rows)
        g_array_unref(rows);
    g_free(one);
    g_free(unit);
    g_free(column);
    g_free(data);
    case_free(t);
    return ok;
}

/* A [case NAME] or [series NAME] group. */
static bool group_read(strata_published *set, const strata_keyfile *kf, const char *group, const char *dir,
                       GError **err)
{
    bool series = g_str_has_prefix(group, "series ");
    char *name = series || g_str_has_prefix(group, "case ") ? g_strstrip(g_strdup(strchr(group, ' ') + 1)) : NULL;
    bool ok = name && *name;
    if (!ok) {
        char *where = strata_keyfile_where(kf, group, NULL);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected a group [case NAME] or [series NAME], not [%s]", where, group);
        g_free(where);
    } else {
        ok = series ? series_read(set, kf, group, name, dir, err) : case_read(set, kf, group, name, dir, err);
    }
    g_free(name);
    return ok;
}

bool strata_published_load(strata_published *set, const char *path, GError **err)
{
    strata_keyfile *kf = strata_keyfile_load(path, "validation file", "case NAME", 0, err);
    if (!kf)
        return false;
    char *dir = g_path_get_dirname(path);
    gsize n = 0;
    char **groups = strata_keyfile_groups(kf, &n);
    bool ok = true;
    for (gsize i = 0; ok && i < n; i++)
        ok = group_read(set, kf, groups[i], dir, err);
    if (ok && n == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: no [case NAME] group", path);
        ok = false;
    }
    g_strfreev(groups);
    g_free(dir);
    strata_keyfile_free(kf);
    return ok;
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *strata_published_default_dir(void)
{
    if (g_file_test("validation", G_FILE_TEST_IS_DIR))
        return g_strdup("validation");
    return g_build_filename(STRATA_SOURCE_DIR, "validation", NULL);
}

bool strata_published_load_dir(strata_published *set, const char *dir, GError **err)
{
    GDir *d = g_dir_open(dir, 0, err);
    if (!d) {
        if (err && *err)
            (*err)->domain = STRATA_ERROR, (*err)->code = STRATA_ERROR_IO;
        return false;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(d));)
        if (g_str_has_suffix(name, ".ini"))
            g_ptr_array_add(names, g_build_filename(dir, name, NULL));
    g_dir_close(d);
    g_ptr_array_sort(names, compare_names);
    bool ok = names->len > 0;
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: no case files (*.ini)", dir);
    for (guint i = 0; ok && i < names->len; i++)
        ok = strata_published_load(set, g_ptr_array_index(names, i), err);
    g_ptr_array_free(names, TRUE);
    return ok;
}

/* The op stream of a case with gen=: the workload it names (a
 * strata_run_spec_open_fn; a case with trace= opens its file). */
static strata_source *case_source(void *data, const strata_hw *hw, GError **err)
{
    (void)hw;
    const strata_published_case *c = data;
    char **words = g_strsplit_set(c->gen, " \t", -1);
    GPtrArray *args = g_ptr_array_new();
    for (char **w = words + 1; *w; w++)
        if (**w)
            g_ptr_array_add(args, *w);
    g_ptr_array_add(args, NULL);
    strata_source *src = strata_workload_generate(words[0], (const char *const *)args->pdata, err);
    if (!src)
        g_prefix_error(err, "%s: gen: ", c->where); /* the case's FILE:LINE, not the generator's name alone */
    g_ptr_array_free(args, TRUE);
    g_strfreev(words);
    return src;
}

/* The case's figure from a run's makespan, in the metric's unit. */
static double case_value(const strata_published_case *c, double makespan_s)
{
    switch (c->metric) {
    case STRATA_PUBLISHED_BANDWIDTH:
        return (double)c->bytes / makespan_s;
    case STRATA_PUBLISHED_BUSBW:
        return (double)c->bytes / makespan_s * c->busbw_factor;
    default:
        return makespan_s;
    }
}

/* After a failed run: whether the case's hardware file loads alone but
 * not with its set= overrides (so the fault is set='s). */
static bool set_refused(const strata_published_case *c)
{
    strata_hw *plain = strata_hw_load(c->hw, NULL, NULL);
    strata_hw *over = plain ? strata_hw_load(c->hw, (const char *const *)c->set, NULL) : NULL;
    bool refused = plain && !over;
    strata_hw_free(over);
    strata_hw_free(plain);
    return refused;
}

/* In the child: the case's value, or an error message. */
static char *child_value(const strata_published_case *c)
{
    if (c->serve)
        return strata_published_serve_child(c);
    GError *err = NULL;
    strata_results *r = NULL;
    strata_run_spec_options spec_opt = {.hw_path = c->hw, .trace_path = c->gen ? NULL : c->trace,
                                        .open = c->gen ? case_source : NULL, .open_data = (void *)c,
                                        .expand_spmd = true, .hw_overrides = (const char *const *)c->set};
    char *line = NULL;
    if (strata_run_spec_run(&spec_opt, &r, &err)) {
        if (r->oom || !(r->makespan_s > 0))
            line = g_strdup_printf("%s %s: the trace %s", r->oom ? "oom" : "error", c->where,
                                   r->oom ? "ran out of memory" : "takes no time");
        else
            line = g_strdup_printf("ok %.17g", case_value(c, r->makespan_s));
    } else if (c->set && set_refused(c)) { /* the case's set= line, not only the override's words */
        line = g_strdup_printf("error %s: [case %s] set: %s", c->set_where, c->name, err ? err->message : "failed");
    } else if (c->gen && err && !g_str_has_prefix(err->message, c->where)) {
        /* the generated program refused by the model: the binder names the generator ("collective: op 3") */
        line = g_strdup_printf("error %s: [case %s] gen: %s", c->where, c->name, err->message);
    } else {
        line = g_strdup_printf("error %s", err ? err->message : "failed");
    }
    g_clear_error(&err);
    strata_results_free(r);
    return line;
}

/* child_value for strata_child_text */
static char *child_value_of(void *c)
{
    return child_value(c);
}

bool strata_published_simulate(const strata_published_case *c, double *value, GError **err)
{
    char *text = strata_child_text(child_value_of, (void *)c, err);
    if (!text) {
        if (err && g_error_matches(*err, STRATA_ERROR, STRATA_ERROR_INTERNAL)) /* the child did not exit 0 */
            g_prefix_error(err, "%s: the simulation of case '%s' ended abnormally: ", c->where, c->name);
        return false;
    }
    bool ok = false;
    if (g_str_has_prefix(text, "ok ")) {
        *value = g_ascii_strtod(text + 3, NULL);
        ok = true;
    } else if (g_str_has_prefix(text, "error ") || g_str_has_prefix(text, "oom "))
        g_set_error(err, STRATA_ERROR, text[0] == 'o' ? STRATA_ERROR_OOM : STRATA_ERROR_INPUT, "%s",
                    strchr(text, ' ') + 1); /* out of memory: exit 1, as run */
    else
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s: the simulation of case '%s' ended abnormally",
                    c->where, c->name);
    g_free(text);
    return ok;
}

bool strata_published_run(strata_published *set, GError **err)
{
    for (guint i = 0; i < set->cases->len; i++) {
        strata_published_case *c = g_ptr_array_index(set->cases, i);
        GError *e = NULL;
        if (strata_published_simulate(c, &c->simulated, &e))
            continue;
        if (!g_error_matches(e, STRATA_ERROR, STRATA_ERROR_OOM)) {
            g_propagate_error(err, e);
            return false;
        }
        c->out_of_memory = true; /* the model's answer: it does not fit */
        c->simulated = NAN;
        g_error_free(e);
    }
    return true;
}

double strata_published_error(const strata_published_case *c)
{
    return (c->simulated - c->measured) / c->measured;
}

static gint compare_doubles(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of |error| over the simulated cases of group (NULL: all). */
static double median_error(const strata_published *set, const char *group)
{
    GArray *errors = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < set->cases->len; i++) {
        const strata_published_case *c = g_ptr_array_index(set->cases, i);
        double e = fabs(strata_published_error(c));
        if (!isnan(e) && (!group || strcmp(c->group, group) == 0))
            g_array_append_val(errors, e);
    }
    g_array_sort(errors, compare_doubles);
    guint n = errors->len;
    double median = n == 0 ? NAN
                    : n % 2 ? g_array_index(errors, double, n / 2)
                            : (g_array_index(errors, double, n / 2 - 1) + g_array_index(errors, double, n / 2)) / 2;
    g_array_free(errors, TRUE);
    return median;
}

double strata_published_median_error(const strata_published *set)
{
    return median_error(set, NULL);
}

double strata_published_group_median_error(const strata_published *set, const char *group)
{
    return median_error(set, group);
}

static char *format_value(strata_published_metric m, double v)
{
    if (isnan(v))
        return g_strdup("-");
    if (m > STRATA_PUBLISHED_BUSBW)
        return strata_published_serve_format(m, v);
    return m == STRATA_PUBLISHED_MAKESPAN ? strata_format_time(v) : strata_format_bandwidth(v);
}

void strata_published_print(const strata_published *set, FILE *out)
{
    int width = 4, gwidth = 5;
    GPtrArray *groups = g_ptr_array_new(); /* in order of first appearance, borrowed */
    for (guint i = 0; i < set->cases->len; i++) {
        const strata_published_case *c = g_ptr_array_index(set->cases, i);
        width = MAX(width, (int)strlen(c->name));
        gwidth = MAX(gwidth, (int)strlen(c->group));
        if (!g_ptr_array_find_with_equal_func(groups, c->group, g_str_equal, NULL))
            g_ptr_array_add(groups, c->group);
    }
    fprintf(out, "%-*s  %-*s  %14s  %14s  %8s\n", width, "case", gwidth, "group", "measured", "simulated", "error");
    for (guint i = 0; i < set->cases->len; i++) {
        const strata_published_case *c = g_ptr_array_index(set->cases, i);
        char *m = format_value(c->metric, c->measured);
        char *s = c->out_of_memory ? g_strdup("out of memory") : format_value(c->metric, c->simulated);
        char *e = c->out_of_memory ? g_strdup("-") : g_strdup_printf("%+7.1f%%", strata_published_error(c) * 100);
        fprintf(out, "%-*s  %-*s  %14s  %14s  %8s\n", width, c->name, gwidth, c->group, m, s, e);
        g_free(m);
        g_free(s);
        g_free(e);
    }
    for (guint g = 0; g < groups->len; g++) {
        const char *name = g_ptr_array_index(groups, g);
        guint n = 0;
        for (guint i = 0; i < set->cases->len; i++) {
            const strata_published_case *c = g_ptr_array_index(set->cases, i);
            n += !c->out_of_memory && strcmp(c->group, name) == 0;
        }
        fprintf(out, "median |error| over %u %s cases: %.1f%%\n", n, name,
                strata_published_group_median_error(set, name) * 100);
    }
    guint n_oom = 0;
    for (guint i = 0; i < set->cases->len; i++)
        n_oom += ((const strata_published_case *)g_ptr_array_index(set->cases, i))->out_of_memory;
    fprintf(out, "median |error| over %u cases: %.1f%%\n", set->cases->len - n_oom,
            strata_published_median_error(set) * 100);
    if (n_oom)
        fprintf(out, "out of memory in the model (no error figure): %u case%s\n", n_oom, n_oom > 1 ? "s" : "");
    g_ptr_array_free(groups, TRUE);
}
