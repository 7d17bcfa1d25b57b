/*
 * serve_coll.c: a serving step's library collective as strata's collective
 * model simulates it (serve_coll.h).
 */
#include "serve/serve_coll.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/interrupt.h"
#include "core/mesh.h"
#include "collective/coll_algo.h"
#include "engine/engine.h"
#include "hw/coll_impl.h"
#include "spmd/spmd.h"
#include "workload/workload.h"

/* The kinds a step runs, as indices of the caches. */
enum { KIND_AR, KIND_AG, KIND_RS, N_KINDS };

/* Two anchors around sizes that run the same (choice below), and their
 * times: every size between them is on their line. */
typedef struct coll_span {
    uint64_t lo, hi;
    double t_lo, t_hi;
} coll_span;

struct strata_serve_coll {
    const strata_hw *hw;
    uint32_t ranks;
    GHashTable *anchors[N_KINDS];  /* in_bytes (gint64) -> simulated time (double) */
    GHashTable *times[N_KINDS];    /* in_bytes -> the time given (anchors or interpolated) */
    const strata_coll_algo *algos[N_KINDS]; /* the row's pick for a group of all ranks, per kind */
    GArray *steps;                 /* scratch: a schedule (strata_coll_step) */
    GArray *spans[N_KINDS];        /* coll_span: the anchor pairs used so far, disjoint, by lo */
    uint32_t simulations;
    bool warned;                   /* strata_serve_coll_charge's warning given */
};

static int kind_index(strata_op_kind kind)
{
    return kind == STRATA_OP_ALL_GATHER ? KIND_AG : kind == STRATA_OP_REDUCE_SCATTER ? KIND_RS : KIND_AR;
}

static GHashTable *size_table(void)
{
    return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
}

strata_serve_coll *strata_serve_coll_new(const strata_hw *hw, uint32_t ranks)
{
    strata_serve_coll *c = g_new0(strata_serve_coll, 1);
    c->hw = hw;
    c->ranks = ranks;
    char *text = g_strdup_printf("data:%u", ranks);
    strata_mesh *mesh = strata_mesh_parse(text, NULL);
    static const strata_op_kind kinds[N_KINDS] = {STRATA_OP_ALL_REDUCE, STRATA_OP_ALL_GATHER,
                                                  STRATA_OP_REDUCE_SCATTER};
    for (int k = 0; k < N_KINDS; k++) {
        c->anchors[k] = size_table();
        c->times[k] = size_table();
        c->spans[k] = g_array_new(FALSE, FALSE, sizeof(coll_span));
        const char *name = mesh ? strata_coll_impl_pick(hw, kinds[k], mesh, 1u) : NULL;
        c->algos[k] = name ? strata_coll_algo_find(name) : NULL;
    }
    strata_mesh_free(mesh);
    g_free(text);
    c->steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    return c;
}

void strata_serve_coll_free(strata_serve_coll *c)
{
    if (!c)
        return;
    for (int k = 0; k < N_KINDS; k++) {
        g_hash_table_destroy(c->anchors[k]);
        g_hash_table_destroy(c->times[k]);
        g_array_free(c->spans[k], TRUE);
    }
    g_array_free(c->steps, TRUE);
    g_free(c);
}

uint32_t strata_serve_coll_simulations(const strata_serve_coll *c)
{
    return c->simulations;
}

static bool lookup(GHashTable *t, uint64_t bytes, double *v)
{
    gint64 key = (gint64)bytes;
    const double *p = g_hash_table_lookup(t, &key);
    if (p)
        *v = *p;
    return p != NULL;
}

static void store(GHashTable *t, uint64_t bytes, double v)
{
    gint64 *key = g_new(gint64, 1);
    double *val = g_new(double, 1);
    *key = (gint64)bytes;
    *val = v;
    g_hash_table_replace(t, key, val);
}

/* ---- one simulation, in a child ---- */

typedef struct sim_args {
    const strata_serve_coll *c;
    strata_op_kind kind;
    uint64_t gen_bytes; /* `strata gen collective`'s bytes= (nccl-tests' size: an all-gather's whole output) */
} sim_args;

/* The model the collective runs on: hw itself when it has `ranks` devices,
 * else hw loaded again with hardware.devices = ranks (the slice `strata
 * run` takes for a program on fewer devices; *owned set, to free). */
static const strata_hw *slice_of(const strata_serve_coll *c, strata_hw **owned, GError **err)
{
    *owned = NULL;
    if (strata_spmd_devices(c->hw) == c->ranks)
        return c->hw;
    char *devices = g_strdup_printf("hardware.devices=%u", c->ranks);
    const char *const more[] = {devices, NULL};
    *owned = strata_hw_reload(c->hw, more, err);
    g_free(devices);
    return *owned;
}

/* In the child: "ok TIME" (the collective's first step's start to its last
 * step's end, as the run's collective table reports it) or "error MESSAGE". */
static char *child_time(void *data)
{
    const sim_args *a = data;
    GError *err = NULL;
    strata_hw *owned = NULL;
    strata_results *r = NULL;
    char *line = NULL;
    const strata_hw *hw = slice_of(a->c, &owned, &err);
    char *op = g_strdup_printf("op=%s", strata_op_kind_name(a->kind));
    char *bytes = g_strdup_printf("bytes=%" G_GUINT64_FORMAT, a->gen_bytes);
    char *devices = g_strdup_printf("devices=%u", a->c->ranks);
    const char *args[] = {op, bytes, devices, "dtype=bf16", NULL};
    strata_source *src = hw ? strata_workload_generate("collective", args, &err) : NULL;
    if (src)
        src = strata_spmd_expand_auto(src, hw, STRATA_SPMD_AUTO, STRATA_SPMD_AUTO_COPIES);
    strata_engine_options eo;
    strata_engine_options_init(&eo);
    if (src && strata_engine_run(hw, src, &eo, &r, &err)) {
        const strata_collective_result *cr =
            r->collectives && r->collectives->len ? &g_array_index(r->collectives, strata_collective_result, 0) : NULL;
        if (!r->oom && cr && cr->end_s > cr->start_s && cr->start_s >= 0)
            line = g_strdup_printf("ok %.17g", cr->end_s - cr->start_s);
        else
            line = g_strdup(r->oom ? "error the collective ran out of memory" : "error no collective ran");
    }
    if (!line)
        line = g_strdup_printf("error %s", err ? err->message : "failed");
    g_clear_error(&err);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(owned);
    g_free(op);
    g_free(bytes);
    g_free(devices);
    return line;
}

bool strata_serve_coll_simulate(const strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double *time_s,
                                GError **err)
{
    sim_args a = {c, kind, kind == STRATA_OP_ALL_GATHER ? in_bytes * c->ranks : in_bytes};
    GError *child = NULL;
    char *text = strata_child_text(child_time, &a, &child);
    if (!text && !g_error_matches(child, STRATA_ERROR, STRATA_ERROR_INTERNAL)) {
        g_propagate_error(err, child); /* the pipe or the fork */
        return false;
    }
    if (!text) { /* a child that did not exit 0: "ended abnormally", as an empty answer was */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "the %s of %" G_GUINT64_FORMAT " B over %u ranks of %s: "
                    "the simulation ended abnormally (%s)", strata_op_kind_name(kind), in_bytes, c->ranks,
                    strata_hw_origin(c->hw), child->message);
        g_error_free(child);
        return false;
    }
    bool ok = g_str_has_prefix(text, "ok ");
    if (ok)
        *time_s = g_ascii_strtod(text + 3, NULL);
    else
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "the %s of %" G_GUINT64_FORMAT " B over %u ranks of %s: %s",
                    strata_op_kind_name(kind), in_bytes, c->ranks, strata_hw_origin(c->hw),
                    g_str_has_prefix(text, "error ") ? text + 6 : "the simulation ended abnormally");
    g_free(text);
    return ok;
}

/* An anchor's time: its simulation, once. */
static bool anchor(strata_serve_coll *c, strata_op_kind kind, uint64_t bytes, double *t, GError **err)
{
    GHashTable *tab = c->anchors[kind_index(kind)];
    if (lookup(tab, bytes, t))
        return true;
    if (!strata_serve_coll_simulate(c, kind, bytes, t, err))
        return false;
    c->simulations++;
    store(tab, bytes, *t);
    return true;
}

/* ---- anchors ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ull; /* FNV-1a's prime, a word at a time */
}

/* What the simulation of a size runs, as one number: the library's choice
 * (the hardware row's algorithm for the group, tuned: NCCL's algorithm,
 * protocol and channels) and the shape of the step schedule it builds
 * (coll_sched.h: its rounds and each step's round, lane, ranks, flags and
 * runs of rounds, the bytes and places left out). Between two sizes that
 * give the same number the same steps move bytes that grow with the size,
 * and the simulated time runs along a line (measured by bench_serve_coll);
 * a new chunk, loop or channel starts a new run. ~0 where the row cannot
 * tune the size. */
static uint64_t choice(strata_serve_coll *c, strata_op_kind kind, uint64_t bytes)
{
    const strata_coll_algo *a = c->algos[kind_index(kind)];
    if (!a)
        return 0;
    strata_coll_shape sh = {.kind = kind, .algo = a, .n_dims = 1, .dims = {c->ranks}, .in_bytes = bytes,
                            .domain_ranks = c->ranks, .fold = a->folds};
    GError *e = NULL;
    if (a->ops->tune && !a->ops->tune(&sh, c->hw, &e)) {
        g_clear_error(&e);
        return ~(uint64_t)0;
    }
    g_array_set_size(c->steps, 0);
    uint64_t h = mix(mix(mix(14695981039346656037ull, sh.tune.algo), sh.tune.proto), sh.channels);
    h = mix(mix(h, strata_coll_schedule(&sh, c->steps)), c->steps->len);
    for (guint i = 0; i < c->steps->len; i++) {
        const strata_coll_step *st = &g_array_index(c->steps, strata_coll_step, i);
        uint64_t flags = (uint64_t)st->reduce | (uint64_t)st->handshake << 1 | (uint64_t)st->fused << 2 |
                         (uint64_t)st->polled << 3 | (uint64_t)st->pipelined << 4 | (uint64_t)st->slotted << 5;
        h = mix(mix(mix(mix(h, st->round), st->lane), (uint64_t)st->src << 32 | st->dst), flags);
        h = mix(mix(h, st->rounds), st->pieces);
    }
    return h;
}

/* IN's grain: a whole bf16 element, and a reduce-scatter's buffer a whole
 * number of them per rank (an all-gather's IN is a rank's share). */
static uint64_t grain(const strata_serve_coll *c, strata_op_kind kind)
{
    return kind == STRATA_OP_REDUCE_SCATTER ? 2ull * c->ranks : 2ull;
}

/* Grid point k: 2^(k/2) rounded down to the grain (at least one grain). */
static uint64_t grid(uint64_t g, uint32_t k)
{
    double v = floor(ldexp(k % 2 ? sqrt(2.0) : 1.0, (int)(k / 2)));
    uint64_t b = (uint64_t)v / g * g;
    return b ? b : g;
}

/* The bound of the run of sizes around `bytes` (key there) that the
 * library runs as it runs `bytes`, toward `far` (a grid point whose
 * choice differs), by bisection on multiples of the grain: the nearest
 * size to `far` that keeps the choice. The choices change a few times
 * over the sizes and each is one run of sizes. */
static uint64_t bound(strata_serve_coll *c, strata_op_kind kind, uint64_t g, uint64_t bytes, uint64_t key,
                      uint64_t far)
{
    uint64_t in = (bytes + g - 1) / g, out = far / g; /* in: keeps the choice; out: does not */
    while (in > out ? in - out > 1 : out - in > 1) {
        uint64_t mid = in / 2 + out / 2 + (in % 2 + out % 2) / 2;
        if (choice(c, kind, mid * g) == key)
            in = mid;
        else
            out = mid;
    }
    return in * g;
}

/* The span that holds bytes (NULL: none yet); *at: where one starting
 * past bytes would go. */
static const coll_span *span_of(const GArray *spans, uint64_t bytes, guint *at)
{
    guint a = 0, b = spans->len; /* spans[..a) start at or below bytes, spans[b..) above */
    while (a < b) {
        guint m = a + (b - a) / 2;
        if (g_array_index(spans, coll_span, m).lo <= bytes)
            a = m + 1;
        else
            b = m;
    }
    *at = a;
    const coll_span *s = a ? &g_array_index(spans, coll_span, a - 1) : NULL;
    return s && bytes <= s->hi ? s : NULL;
}

/* The anchors around bytes: the grid points around it, each moved in to
 * the end of the run of sizes that run as bytes does where it runs
 * otherwise; simulated; kept as a span. */
static bool new_span(strata_serve_coll *c, strata_op_kind kind, uint64_t bytes, coll_span *sp, GError **err)
{
    uint64_t g = grain(c, kind);
    uint32_t k = 0;
    while (grid(g, k + 1) <= bytes && k < 127)
        k++;
    uint64_t lo = grid(g, k), hi = grid(g, k + 1);
    if (bytes <= lo || lo == hi) /* a grid point (or below the first) */
        lo = hi = bytes <= lo ? lo : hi;
    uint64_t key = choice(c, kind, bytes);
    if (lo != hi && choice(c, kind, lo) != key)
        lo = bound(c, kind, g, bytes, key, lo);
    if (lo != hi && choice(c, kind, hi) != key)
        hi = bound(c, kind, g, bytes, key, hi);
    *sp = (coll_span){lo, hi, 0, 0};
    return anchor(c, kind, lo, &sp->t_lo, err) && anchor(c, kind, hi, &sp->t_hi, err);
}

bool strata_serve_coll_time(strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double *time_s,
                            GError **err)
{
    GHashTable *given = c->times[kind_index(kind)];
    if (lookup(given, in_bytes, time_s))
        return true;
    GArray *spans = c->spans[kind_index(kind)];
    guint at = 0;
    const coll_span *known = span_of(spans, in_bytes, &at);
    coll_span sp;
    if (known)
        sp = *known;
    else if (!new_span(c, kind, in_bytes, &sp, err))
        return false;
    else if (sp.hi > sp.lo && !span_of(spans, sp.lo, &at))
        g_array_insert_val(spans, at, sp);
    *time_s = sp.hi == sp.lo ? sp.t_lo
                             : sp.t_lo + (sp.t_hi - sp.t_lo) * ((double)in_bytes - (double)sp.lo) /
                                             ((double)sp.hi - (double)sp.lo);
    store(given, in_bytes, *time_s);
    return true;
}

double strata_serve_coll_charge(strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double ring_bw,
                                double ring_lat)
{
    double sim = 0;
    GError *e = NULL;
    if (strata_serve_coll_time(c, kind, in_bytes, &sim, &e))
        return sim;
    if (!c->warned)
        g_printerr("strata: warning: serve: %s; the collectives are charged the collective row's closed form\n",
                   e ? e->message : "the simulation failed");
    c->warned = true;
    g_clear_error(&e);
    const strata_coll_impl *row = strata_hw_coll_impl(c->hw);
    strata_coll_tuning tu = {0};
    if (row->tune && row->tune(c->hw, kind, c->ranks, c->ranks, in_bytes, 0, &tu, NULL) && tu.estimate_s > 0)
        return tu.estimate_s;
    double n = c->ranks, bytes = kind == STRATA_OP_ALL_GATHER ? (double)in_bytes * n : (double)in_bytes;
    double pass = (n - 1) / n * bytes / ring_bw + (n - 1) * ring_lat;
    return kind == STRATA_OP_ALL_REDUCE ? 2 * pass : pass;
}

/* The library collectives a step runs: an all-reduce, or under attention
 * DP an all-gather and a reduce-scatter; their count. */
static int step_kinds(bool attention_dp, strata_op_kind kinds[2])
{
    kinds[0] = attention_dp ? STRATA_OP_ALL_GATHER : STRATA_OP_ALL_REDUCE;
    kinds[1] = STRATA_OP_REDUCE_SCATTER;
    return attention_dp ? 2 : 1;
}

/* Whether the hardware's collective row tunes `kind` over tp ranks (its NCCL_ALGO / NCCL_PROTO may leave none), the
 * ranks 0 to tp - 1 as the step's group places them: min(tp, domain) a scale-up domain, as spmd_classes.c's
 * group_domain_ranks gives a contiguous group (tp, one domain, read NVLS as allowed on 2 x 8 GPUs). */
static bool tuned(const strata_hw *hw, strata_op_kind kind, uint32_t tp, GError **err)
{
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    strata_coll_tuning tu;
    uint32_t per = MIN(tp, strata_hw_domain(hw));
    if (tp < 2 || !row->tune || row->tune(hw, kind, tp, per && tp % per == 0 ? per : 1, 1u << 20, 0, &tu, err))
        return true;
    g_prefix_error(err, "--tp %u on %s: ", tp, strata_hw_origin(hw));
    return false;
}

bool strata_serve_coll_check(strata_serve_coll *c, bool attention_dp, bool gather_logits, GError **err)
{
    /* the logits' all-gather, checked by the row's tuning (no simulation: the spans stay as they were): where the
     * row runs none (nccl_algo = ^Ring across nodes) each step's was charged a closed form at exit 0 */
    if (gather_logits && !tuned(c->hw, STRATA_OP_ALL_GATHER, c->ranks, err))
        return false;
    double t = 0;
    strata_op_kind kinds[2];
    int n = step_kinds(attention_dp, kinds);
    for (int i = 0; i < n; i++)
        if (!strata_serve_coll_time(c, kinds[i], 1u << 20, &t, err)) {
            g_prefix_error(err, "--tp %u: ", c->ranks);
            return false;
        }
    return true;
}

bool strata_serve_coll_check_tuned(const strata_hw *hw, uint32_t tp, bool attention_dp, GError **err)
{
    strata_op_kind kinds[2];
    int n = step_kinds(attention_dp, kinds);
    for (int i = 0; i < n; i++)
        if (!tuned(hw, kinds[i], tp, err))
            return false;
    return true;
}
