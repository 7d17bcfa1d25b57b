/*
 * shard.c: data-parallel and fully sharded data-parallel training steps
 * over a device mesh (see shard.h): the plan from `mesh=`/`sharding=`, and
 * the hooks that gather parameters ahead of each group's pass and reduce
 * gradients after it.
 *
 * Invariants:
 *  1. units[0] lists the model's groups in forward order, units[1] in
 *     backward order, each with the parameters its pass reads (each once);
 *     issued[P] is the number of units of pass P whose gathers are in the
 *     graph, a unit's gathers always precede its pass, and current[P] is
 *     the number of units of pass P that have begun (the hooks run in
 *     order).
 *  2. first_group[p] is the lowest group whose forward reads parameter p:
 *     its gradient is complete after that group's backward pass.
 *  3. shard[] and grad_shard[] (fsdp) map a parameter to its shard and its
 *     gradient's shard; both are WL_NONE outside fsdp.
 */
#include "workload/shard.h"
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"

#define GATHER_STREAM "gather"
#define REDUCE_STREAM "reduce"
#define DATA_AXIS "data"

typedef struct shard_unit {
    int group;
    GArray *params;   /* wl_tensor: what the pass reads */
    GArray *gathered; /* wl_tensor: their gathered copies (fsdp), once issued */
} shard_unit;

struct wl_shard {
    wl_graph *g;
    wl_model *m;
    wl_shard_plan plan;
    GArray *units[2]; /* shard_unit */
    guint issued[2], current[2];
    GHashTable *first_group; /* parameter -> GINT_TO_POINTER(group) */
    GHashTable *shard, *grad_shard; /* parameter -> tensor */
    GHashTable *gathers[2];         /* parameter -> gathers issued in the pass */
    GHashTable *experts;            /* the expert parameters (wl_shard_expert) */
    /* [0] the other parameters, [1] the experts': the axes a gradient is
     * reduced over (dp: all-reduced; fsdp: the parameter sharded, gathered
     * and reduce-scattered over them, ways[] ways). "": none. */
    char axes[2][48];
    uint64_t ways[2];
    int final_group;
};

#define KEY(t) GUINT_TO_POINTER((guint)(t) + 1u)
#define VAL(p) ((wl_tensor)(GPOINTER_TO_UINT(p) - 1u))

/* Sets an input error on err and is false. */
#define FAIL(...) (g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, __VA_ARGS__), false)

bool wl_shard_check_divides(const strata_params *p, const char *workload, const char *name, uint64_t by,
                            const char *axis, GError **err)
{
    int64_t v = strata_params_int(p, name);
    if (by > 1 && (uint64_t)v % by != 0)
        return FAIL("%s: expected %s divisible by the mesh's %s axis (%" G_GUINT64_FORMAT "), got %s=%" G_GINT64_FORMAT,
                    workload, name, axis, by, name, v);
    return true;
}

/* A tensor of p's dtype named prefix+NAME+suffix: shaped like p, or flat
 * with 1/n of its elements when n > 1. */
static wl_tensor derived(wl_graph *g, wl_tensor p, const char *prefix, const char *suffix, strata_tag tag,
                         uint64_t n, unsigned flags)
{
    const uint64_t *pd;
    uint32_t nd = wl_graph_dims(g, p, &pd);
    uint64_t dims[STRATA_MAX_DIMS];
    memcpy(dims, pd, nd * sizeof dims[0]);
    if (n > 1) {
        uint64_t e = wl_graph_elements(g, p);
        g_assert(e % n == 0); /* the generator checked the shapes */
        dims[0] = e / n;
        nd = 1;
    }
    char *name = g_strconcat(prefix, wl_graph_name(g, p), suffix, NULL);
    wl_tensor t = wl_graph_tensor(g, name, tag, wl_graph_dtype(g, p), nd, dims, flags);
    g_free(name);
    return t;
}

/* The all-gathers of unit j of the pass, on the gather stream, between the
 * events that main records (go) and waits for (done); with `each`, also a
 * done event after each parameter's gather, ag_fJ_K.done (K its index in
 * the unit), which main waits for right before its first step reading it. */
static void issue_gathers(wl_shard *s, bool backward, guint j, bool each)
{
    shard_unit *u = &g_array_index(s->units[backward], shard_unit, j);
    if (!u->params->len)
        return;
    char go[48], done[48];
    g_snprintf(go, sizeof go, "ag_%c%u.go", backward ? 'b' : 'f', j);
    g_snprintf(done, sizeof done, "ag_%c%u.done", backward ? 'b' : 'f', j);
    wl_graph_event(s->g, true, go);
    wl_graph_stream(s->g, GATHER_STREAM);
    wl_graph_event(s->g, false, go);
    for (guint i = 0; i < u->params->len; i++) {
        wl_tensor p = g_array_index(u->params, wl_tensor, i);
        /* A parameter that several groups read is gathered once per group:
         * P_ag, P_ag_1, ... (names stay unique while live). */
        guint count = GPOINTER_TO_UINT(g_hash_table_lookup(s->gathers[backward], KEY(p)));
        g_hash_table_insert(s->gathers[backward], KEY(p), GUINT_TO_POINTER(count + 1));
        char suffix[32];
        g_snprintf(suffix, sizeof suffix, count ? "%s_%u" : "%s", backward ? "_ag_bwd" : "_ag", count);
        wl_tensor full = derived(s->g, p, "", suffix, STRATA_TAG_PARAM, 1, WL_TEMP);
        g_array_append_val(u->gathered, full);
        wl_graph_collective(s->g, STRATA_OP_ALL_GATHER, full, VAL(g_hash_table_lookup(s->shard, KEY(p))),
                            s->axes[g_hash_table_contains(s->experts, KEY(p))]);
        if (each) {
            char one[64];
            g_snprintf(one, sizeof one, "ag_%c%u_%u.done", backward ? 'b' : 'f', j, i);
            wl_graph_event(s->g, true, one);
            wl_model_substitute(s->m, p, full, one);
        }
    }
    if (!each)
        wl_graph_event(s->g, true, done);
    wl_graph_stream(s->g, NULL);
}

static void hook_begin(void *ud, int group, bool backward)
{
    wl_shard *s = ud;
    guint i = s->current[backward]++;
    assert(i < s->units[backward]->len); /* invariant 1: the hooks run in order, once per unit */
    const shard_unit *u = &g_array_index(s->units[backward], shard_unit, i);
    g_assert(u->group == group);
    if (s->plan.data != WL_DATA_FSDP)
        return;
    if (s->plan.scan) { /* the loop body's own gathers, each awaited at its first use */
        issue_gathers(s, backward, i, true); /* (substitutes each gathered copy, awaited) */
        s->issued[backward] = i + 1;
        return;
    }
    guint upto = (guint)MIN((uint64_t)i + s->plan.prefetch, (uint64_t)s->units[backward]->len - 1);
    for (; s->issued[backward] <= upto; s->issued[backward]++)
        issue_gathers(s, backward, s->issued[backward], false);
    assert(s->issued[backward] > i); /* invariant 1: a unit's gathers precede its pass */
    if (!u->params->len)
        return;
    char done[48];
    g_snprintf(done, sizeof done, "ag_%c%u.done", backward ? 'b' : 'f', i);
    wl_graph_event(s->g, false, done);
    for (guint k = 0; k < u->params->len; k++)
        wl_model_substitute(s->m, g_array_index(u->params, wl_tensor, k), g_array_index(u->gathered, wl_tensor, k),
                            NULL);
}

/* After group's backward pass: the reduction of the gradients it
 * completes, and before the optimizer, main's wait for all of them. */
static void hook_end(void *ud, int group, bool backward)
{
    wl_shard *s = ud;
    if (!backward || s->plan.data == WL_DATA_NONE)
        return;
    guint i = s->units[0]->len - s->current[1]; /* this group's index in forward order */
    const shard_unit *u = &g_array_index(s->units[0], shard_unit, i);
    g_assert(u->group == group);
    char go[48];
    g_snprintf(go, sizeof go, "rs_%u.go", i);
    bool any = false;
    for (guint k = 0; k < u->params->len; k++) {
        wl_tensor p = g_array_index(u->params, wl_tensor, k), gp = wl_model_grad(s->m, p);
        if (gp == WL_NONE || GPOINTER_TO_INT(g_hash_table_lookup(s->first_group, KEY(p))) != group)
            continue;
        if (!any && !s->plan.scan) { /* scan: XLA's loop body reduces them in its own schedule, on main */
            wl_graph_event(s->g, true, go);
            wl_graph_stream(s->g, REDUCE_STREAM);
            wl_graph_event(s->g, false, go);
        }
        any = true;
        int e = g_hash_table_contains(s->experts, KEY(p));
        if (s->plan.data == WL_DATA_DP) {
            if (*s->axes[e])
                wl_graph_collective(s->g, STRATA_OP_ALL_REDUCE, gp, gp, s->axes[e]);
            continue;
        }
        wl_tensor gs = derived(s->g, p, "d_", "_shard", STRATA_TAG_GRAD, s->ways[e], WL_TEMP);
        g_hash_table_insert(s->grad_shard, KEY(p), KEY(gs));
        wl_graph_collective(s->g, STRATA_OP_REDUCE_SCATTER, gs, gp, s->axes[e]);
    }
    if (group == s->final_group) {
        wl_graph_stream(s->g, REDUCE_STREAM);
        wl_graph_event(s->g, true, "grads.done");
        wl_graph_stream(s->g, NULL);
        wl_graph_event(s->g, false, "grads.done");
    }
    wl_graph_stream(s->g, NULL);
}

static const wl_model_hooks shard_hooks = {hook_begin, hook_end};

static void unit_clear(gpointer data)
{
    shard_unit *u = data;
    g_array_free(u->params, TRUE);
    g_array_free(u->gathered, TRUE);
}

/* The units of a pass, and where the last parameter went: the model's
 * pass visits its groups in the units' order, so the unit of the next
 * parameter is found from there in amortized O(1) (a search from the
 * start of every unit made a million-layer model quadratic). */
typedef struct unit_cursor {
    GArray *units;
    guint at;
} unit_cursor;

/* Adds parameter p to the unit of group (once). */
static void add_unit_param(void *ud, int group, wl_tensor p)
{
    unit_cursor *cur = ud;
    GArray *units = cur->units;
    for (guint n = 0; n < units->len; n++) {
        guint i = (cur->at + n) % units->len; /* from the last unit on, wrapping once */
        shard_unit *u = &g_array_index(units, shard_unit, i);
        if (u->group != group)
            continue;
        cur->at = i;
        for (guint k = 0; k < u->params->len; k++)
            if (g_array_index(u->params, wl_tensor, k) == p)
                return;
        g_array_append_val(u->params, p);
        return;
    }
    g_assert_not_reached();
}

/* units[0] and units[1] from the model's groups, and first_group[]. */
static void build_units(wl_shard *s, wl_remat remat)
{
    GArray *groups = g_array_new(FALSE, FALSE, sizeof(int));
    wl_model_groups(s->m, groups);
    for (int pass = 0; pass < 2; pass++) {
        s->units[pass] = g_array_new(FALSE, TRUE, sizeof(shard_unit));
        g_array_set_clear_func(s->units[pass], unit_clear);
        for (guint i = 0; i < groups->len; i++) {
            shard_unit u = {g_array_index(groups, int, pass ? groups->len - 1 - i : i),
                            g_array_new(FALSE, FALSE, sizeof(wl_tensor)), g_array_new(FALSE, FALSE, sizeof(wl_tensor))};
            g_array_append_val(s->units[pass], u);
        }
        unit_cursor cur = {s->units[pass], 0};
        wl_model_pass_params(s->m, pass == 1, remat, s->plan.scan, add_unit_param, &cur);
    }
    for (guint i = 0; i < s->units[0]->len; i++) {
        const shard_unit *u = &g_array_index(s->units[0], shard_unit, i);
        for (guint k = 0; k < u->params->len; k++)
            if (!g_hash_table_contains(s->first_group, KEY(g_array_index(u->params, wl_tensor, k))))
                g_hash_table_insert(s->first_group, KEY(g_array_index(u->params, wl_tensor, k)),
                                    GINT_TO_POINTER(u->group));
    }
    s->final_group = groups->len ? g_array_index(groups, int, 0) : 0;
    g_array_free(groups, TRUE);
}

wl_shard *wl_shard_new(wl_graph *g, wl_model *m, const wl_shard_plan *plan, const GArray *params, wl_remat remat)
{
    wl_shard *s = g_new0(wl_shard, 1);
    s->g = g;
    s->m = m;
    s->plan = *plan;
    s->first_group = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->shard = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->grad_shard = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int pass = 0; pass < 2; pass++)
        s->gathers[pass] = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->experts = g_hash_table_new(g_direct_hash, g_direct_equal);
    /* The expert and context axes split the tokens as data does, so the
     * parameters are replicated over them as over data (MaxText shards the
     * weights outside the experts over fsdp x expert; Megatron reduces and
     * shards over dp x cp with EP folded into dp, the experts' over the
     * expert-data-parallel ranks, data x context). */
    for (int e = 0; e < 2; e++) {
        bool ex = plan->e > 1 && !e, cx = plan->c > 1, dx = plan->n > 1 || plan->data == WL_DATA_FSDP;
        g_snprintf(s->axes[e], sizeof s->axes[e], "%s%s%s%s%s", dx ? DATA_AXIS : "", dx && (ex || cx) ? "," : "",
                   ex ? "expert" : "", ex && cx ? "," : "", cx ? "context" : "");
        s->ways[e] = plan->n * (ex ? plan->e : 1) * (cx ? plan->c : 1);
    }
    if (*plan->mesh)
        wl_graph_option(g, "mesh", plan->mesh);
    build_units(s, remat);
    if (plan->data == WL_DATA_FSDP)
        for (guint i = 0; i < params->len; i++) {
            wl_tensor p = g_array_index(params, wl_tensor, i);
            wl_tensor sh = derived(g, p, "", "_shard", STRATA_TAG_PARAM, s->ways[0], WL_ARGUMENT);
            g_hash_table_insert(s->shard, KEY(p), KEY(sh));
        }
    if (plan->data != WL_DATA_NONE)
        wl_model_set_hooks(m, &shard_hooks, s);
    return s;
}

void wl_shard_free(wl_shard *s)
{
    if (!s)
        return;
    for (int pass = 0; pass < 2; pass++) {
        g_array_free(s->units[pass], TRUE);
        g_hash_table_destroy(s->gathers[pass]);
    }
    g_hash_table_destroy(s->first_group);
    g_hash_table_destroy(s->experts);
    g_hash_table_destroy(s->shard);
    g_hash_table_destroy(s->grad_shard);
    g_free(s);
}

void wl_shard_expert(wl_shard *s, wl_tensor p)
{
    g_hash_table_add(s->experts, KEY(p));
    if (s->plan.data == WL_DATA_FSDP && s->ways[1] != s->ways[0]) { /* its own shard (the first is never used) */
        wl_tensor sh = derived(s->g, p, "", "_shard", STRATA_TAG_PARAM, s->ways[1], WL_ARGUMENT);
        g_hash_table_insert(s->shard, KEY(p), KEY(sh));
    }
}

wl_tensor wl_shard_param(const wl_shard *s, wl_tensor p)
{
    gpointer v = g_hash_table_lookup(s->shard, KEY(p));
    return v ? VAL(v) : p;
}

wl_tensor wl_shard_grad(const wl_shard *s, wl_tensor p)
{
    if (s->plan.data != WL_DATA_FSDP)
        return wl_model_grad(s->m, p);
    gpointer v = g_hash_table_lookup(s->grad_shard, KEY(p));
    return v ? VAL(v) : WL_NONE;
}
