/*
 * autodiff.c: reverse-mode differentiation with rematerialization over a
 * list of nodes, emitting computes into a wl_graph (see autodiff.h).
 *
 * Invariants:
 *  1. nodes[] is in forward order and producer[t] is the node writing t
 *     (-1 for arguments); every node writes exactly one tensor.
 *  2. grads[t] is t's gradient tensor once a gradient has flowed into it.
 *  3. During the backward pass of a group, remap[] sends each tensor of the
 *     group that was not saved to its recomputed copy.
 */
#include "workload/autodiff.h"
#include <string.h>

typedef struct wl_vjp {
    double flops;
    GArray *needs; /* wl_tensor */
} wl_vjp;

typedef struct wl_node {
    char *label;
    wl_tensor out;
    GArray *ins; /* wl_tensor */
    wl_vjp *vjps;
    double flops;
    bool is_dot;
    int group;
    bool remat_ok;
} wl_node;

struct wl_model {
    wl_graph *g;
    GArray *nodes;        /* wl_node */
    GHashTable *needs_grad; /* tensor set */
    GHashTable *grads;    /* tensor -> gradient tensor */
    GHashTable *producer; /* tensor -> node index + 1 */
    int group;
    bool remat_ok;
};

#define KEY(t) GUINT_TO_POINTER((guint)(t) + 1u)
#define VAL(p) ((wl_tensor)(GPOINTER_TO_UINT(p) - 1u))

static void node_clear(gpointer data)
{
    wl_node *n = data;
    for (guint k = 0; k < n->ins->len; k++)
        g_array_free(n->vjps[k].needs, TRUE);
    g_free(n->vjps);
    g_array_free(n->ins, TRUE);
    g_free(n->label);
}

wl_model *wl_model_new(wl_graph *g)
{
    wl_model *m = g_new0(wl_model, 1);
    m->g = g;
    m->nodes = g_array_new(FALSE, TRUE, sizeof(wl_node));
    g_array_set_clear_func(m->nodes, node_clear);
    m->needs_grad = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->grads = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->producer = g_hash_table_new(g_direct_hash, g_direct_equal);
    return m;
}

void wl_model_free(wl_model *m)
{
    if (!m)
        return;
    g_array_free(m->nodes, TRUE);
    g_hash_table_destroy(m->needs_grad);
    g_hash_table_destroy(m->grads);
    g_hash_table_destroy(m->producer);
    g_free(m);
}

void wl_model_requires_grad(wl_model *m, wl_tensor t) { g_hash_table_add(m->needs_grad, KEY(t)); }

void wl_model_group(wl_model *m, int group, bool rematerializable)
{
    m->group = group;
    m->remat_ok = rematerializable;
}

static bool needs_grad(const wl_model *m, wl_tensor t) { return g_hash_table_contains(m->needs_grad, KEY(t)); }

uint32_t wl_model_node(wl_model *m, const char *label, wl_tensor out, const wl_tensor *ins, uint32_t n_ins,
                       double flops, bool is_dot)
{
    wl_node n = {0};
    n.label = g_strdup(label);
    n.out = out;
    n.ins = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    g_array_append_vals(n.ins, ins, n_ins);
    n.vjps = g_new0(wl_vjp, n_ins ? n_ins : 1);
    for (uint32_t k = 0; k < n_ins; k++)
        n.vjps[k].needs = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    n.flops = flops;
    n.is_dot = is_dot;
    n.group = m->group;
    n.remat_ok = m->remat_ok;
    for (uint32_t k = 0; k < n_ins; k++)
        if (needs_grad(m, ins[k]))
            wl_model_requires_grad(m, out);
    g_array_append_val(m->nodes, n);
    g_hash_table_insert(m->producer, KEY(out), GUINT_TO_POINTER(m->nodes->len));
    return m->nodes->len - 1;
}

void wl_model_vjp(wl_model *m, uint32_t node, uint32_t k, double flops, const wl_tensor *needs, uint32_t n)
{
    wl_node *nd = &g_array_index(m->nodes, wl_node, node);
    g_assert(k < nd->ins->len);
    nd->vjps[k].flops = flops;
    g_array_set_size(nd->vjps[k].needs, 0);
    g_array_append_vals(nd->vjps[k].needs, needs, n);
}

uint32_t wl_model_matmul(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b, double flops)
{
    wl_tensor ins[2] = {a, b};
    uint32_t n = wl_model_node(m, label, out, ins, 2, flops, true);
    wl_model_vjp(m, n, 0, flops, &b, 1); /* da = dout @ b^T */
    wl_model_vjp(m, n, 1, flops, &a, 1); /* db = a^T @ dout */
    return n;
}

uint32_t wl_model_unary(wl_model *m, const char *label, wl_tensor out, wl_tensor x, double fwd_per_elem,
                        double bwd_per_elem)
{
    double e = (double)wl_graph_elements(m->g, x);
    uint32_t n = wl_model_node(m, label, out, &x, 1, fwd_per_elem * e, false);
    wl_model_vjp(m, n, 0, bwd_per_elem * e, &x, 1);
    return n;
}

uint32_t wl_model_add(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b)
{
    wl_tensor ins[2] = {a, b};
    double e = (double)wl_graph_elements(m->g, out);
    uint32_t n = wl_model_node(m, label, out, ins, 2, e, false);
    wl_model_vjp(m, n, 0, e, NULL, 0);
    wl_model_vjp(m, n, 1, e, NULL, 0);
    return n;
}

static int producer_group(const wl_model *m, wl_tensor t)
{
    gpointer p = g_hash_table_lookup(m->producer, KEY(t));
    if (!p)
        return G_MININT;
    return g_array_index(m->nodes, wl_node, GPOINTER_TO_UINT(p) - 1).group;
}

/* Saved under remat: crosses a group boundary, or is a matmul output under dots. */
static bool is_saved(const wl_model *m, const wl_node *n, wl_remat remat)
{
    if (remat == WL_REMAT_NONE || !n->remat_ok)
        return true;
    if (remat == WL_REMAT_DOTS && n->is_dot)
        return true;
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *c = &g_array_index(m->nodes, wl_node, i);
        if (c->group == n->group)
            continue;
        for (guint k = 0; k < c->ins->len; k++)
            if (g_array_index(c->ins, wl_tensor, k) == n->out)
                return true;
        for (guint k = 0; k < c->ins->len; k++)
            for (guint j = 0; j < c->vjps[k].needs->len; j++)
                if (g_array_index(c->vjps[k].needs, wl_tensor, j) == n->out)
                    return true;
    }
    return false;
}

static wl_tensor mapped(GHashTable *remap, wl_tensor t)
{
    gpointer p = g_hash_table_lookup(remap, KEY(t));
    return p ? VAL(p) : t;
}

/* A tensor shaped like t, named NAME+suffix, or d_NAME when suffix is NULL. */
static wl_tensor clone_tensor(wl_graph *g, wl_tensor t, const char *suffix, strata_tag tag, unsigned flags)
{
    const uint64_t *dims;
    uint32_t nd = wl_graph_dims(g, t, &dims);
    char *name = suffix ? g_strconcat(wl_graph_name(g, t), suffix, NULL)
                        : g_strconcat("d_", wl_graph_name(g, t), NULL);
    wl_tensor c = wl_graph_tensor(g, name, tag, wl_graph_dtype(g, t), nd, dims, flags);
    g_free(name);
    return c;
}

static void recompute_group(wl_model *m, int group, wl_remat remat, GHashTable *remap)
{
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = &g_array_index(m->nodes, wl_node, i);
        if (n->group != group || is_saved(m, n, remat))
            continue;
        wl_tensor c = clone_tensor(m->g, n->out, "_remat", wl_graph_tag(m->g, n->out), WL_TEMP);
        GArray *ins = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
        for (guint k = 0; k < n->ins->len; k++) {
            wl_tensor t = mapped(remap, g_array_index(n->ins, wl_tensor, k));
            g_array_append_val(ins, t);
        }
        char *label = g_strconcat(n->label, "_remat", NULL);
        wl_graph_compute(m->g, label, n->flops, (wl_tensor *)ins->data, ins->len, &c, 1, NULL, 0);
        g_free(label);
        g_array_free(ins, TRUE);
        g_hash_table_insert(remap, KEY(n->out), KEY(c));
    }
}

void wl_model_emit(wl_model *m, wl_remat remat, unsigned grad_flags)
{
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = &g_array_index(m->nodes, wl_node, i);
        wl_graph_compute(m->g, n->label, n->flops, (wl_tensor *)n->ins->data, n->ins->len, &n->out, 1, NULL, 0);
    }
    GHashTable *remap = g_hash_table_new(g_direct_hash, g_direct_equal);
    int cur_group = G_MININT;
    GArray *ins = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    for (guint i = m->nodes->len; i-- > 0;) {
        const wl_node *n = &g_array_index(m->nodes, wl_node, i);
        if (n->group != cur_group) {
            cur_group = n->group;
            g_hash_table_remove_all(remap);
            if (remat != WL_REMAT_NONE && n->remat_ok)
                recompute_group(m, cur_group, remat, remap);
        }
        bool is_loss = i + 1 == m->nodes->len;
        gpointer dp = g_hash_table_lookup(m->grads, KEY(n->out));
        if (!is_loss && !dp)
            continue; /* no gradient flows through this node */
        for (guint k = 0; k < n->ins->len; k++) {
            wl_tensor x = g_array_index(n->ins, wl_tensor, k);
            if (!needs_grad(m, x))
                continue;
            g_array_set_size(ins, 0);
            if (dp) {
                wl_tensor d = VAL(dp);
                g_array_append_val(ins, d);
            }
            for (guint j = 0; j < n->vjps[k].needs->len; j++) {
                wl_tensor t = mapped(remap, g_array_index(n->vjps[k].needs, wl_tensor, j));
                g_array_append_val(ins, t);
            }
            gpointer gp = g_hash_table_lookup(m->grads, KEY(x));
            wl_tensor gx;
            if (gp) {
                gx = VAL(gp);
                g_array_append_val(ins, gx); /* accumulate */
            } else {
                bool is_param = producer_group(m, x) == G_MININT;
                gx = clone_tensor(m->g, x, NULL, STRATA_TAG_GRAD, is_param ? grad_flags : WL_TEMP);
                g_hash_table_insert(m->grads, KEY(x), KEY(gx));
            }
            char *label = g_strdup_printf("%s_vjp%u", n->label, k);
            wl_graph_compute(m->g, label, n->vjps[k].flops, (wl_tensor *)ins->data, ins->len, &gx, 1, NULL, 0);
            g_free(label);
        }
    }
    g_array_free(ins, TRUE);
    g_hash_table_destroy(remap);
}

wl_tensor wl_model_grad(const wl_model *m, wl_tensor t)
{
    gpointer p = g_hash_table_lookup(m->grads, KEY(t));
    return p ? VAL(p) : WL_NONE;
}

bool wl_remat_from_name(const char *name, wl_remat *out)
{
    static const char *const names[] = {"none", "full", "dots", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (wl_remat)i;
            return true;
        }
    return false;
}
