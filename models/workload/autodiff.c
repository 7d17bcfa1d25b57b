/*
 * autodiff.c: reverse-mode differentiation with rematerialization over a
 * list of nodes, emitting computes into a wl_graph (see autodiff.h).
 *
 * Invariants:
 *  1. nodes[] is in forward order and producer[t] - 1 is the node writing t
 *     (0 for arguments); every node writes exactly one tensor, and no two
 *     nodes write the same one.
 *  2. grads[t] - 1 is t's gradient tensor once a gradient has flowed into it
 *     (0 before).
 *  3. Node i's inputs and its gradients' needs are runs of pool[], its
 *     gradients vjps[first_vjp ..]; labels live in strings, mesh axes in
 *     axes (nodes and vjps hold one-byte indices). A node takes 40 bytes
 *     and a vjp 16, plus a kernel's (about 100 bytes) where it names one
 *     (matmuls, attention), so a million tensors stay a few tens of MB.
 *  4. During a group's pass, remap sends each tensor a hook substituted
 *     and (backward) each tensor of the group that was not saved to the
 *     copy the steps read; it is emptied when the pass moves to the next
 *     group.
 *  5. hooks->begin and hooks->end run once per group and pass, in the
 *     order of the steps.
 *  6. A collective node (coll.axis set) has one input, no flops and a
 *     gradient that is the converse collective of its output's; the output
 *     of an all-gather node is never saved (is_saved), so the backward pass
 *     gathers it again before the group's gradients, on stream `regather`;
 *     pending holds each such copy until main's first step reading it,
 *     which waits for the gather first.
 *  7. A dot whose output is reduce-scattered (a row-parallel matmul under
 *     sequence parallelism) writes partial sums that no jaxpr holds: JAX's
 *     value is the dot's sharded output, the reduce-scatter's. The policies
 *     judge the reduce-scatter's output as that dot's (dot-ness, checkpoint
 *     name) and never save the partial sums for it (policy_node).
 *  8. Before a group's backward pass only the unsaved nodes whose outputs
 *     a gradient of the pass or another recomputed node reads are
 *     recomputed (recompute_set: dead-code elimination).
 */
#include "workload/autodiff.h"
#include <assert.h>
#include <string.h>

#define REGATHER_STREAM "regather"
#define RING_STREAM "ring"

/* A mesh axis as nodes and vjps keep it: 0 for none, else its index in
 * axes + 1 (one byte, so that a node stays 40 bytes and a vjp 16). */
typedef uint8_t wl_axis;

/* A collective in place of a compute: kind over axis (0: a compute). A
 * collective-permute's shift is +1, or -1 when kind holds COLL_BACK (the
 * ring neighbours: one byte keeps a vjp at 16 bytes). */
typedef struct wl_coll {
    uint8_t kind; /* strata_op_kind, | COLL_BACK */
    wl_axis axis;
} wl_coll;
#define COLL_BACK 0x80u
#define COLL_KIND(c) ((strata_op_kind)((c).kind & ~COLL_BACK))
#define COLL_SHIFT(c) (((c).kind & COLL_BACK) ? -1 : 1)

typedef struct wl_vjp {
    double flops;
    uint32_t first;      /* the tensors it reads: pool[first .. first + n) */
    uint8_t n;           /* at most WL_VJP_MAX_NEEDS */
    wl_axis reduce_axis; /* 0, or all-reduce the gradient over it */
    wl_coll coll;        /* the gradient is this collective of the output's */
} wl_vjp;

/* The kernels of a node's steps (wl_model_kernel). */
typedef struct wl_node_kernel {
    const char *fwd, *bwd, *mask;
    uint32_t n_dims;
    uint64_t dims[STRATA_MAX_DIMS];
} wl_node_kernel;

typedef struct wl_node {
    const char *label; /* in strings */
    double flops;
    wl_tensor out;
    uint32_t first_in, n_ins; /* pool[first_in .. first_in + n_ins) */
    uint32_t first_vjp;       /* vjps[first_vjp + k]: the gradient for input k */
    int group;
    bool is_dot : 1;
    bool remat_ok : 1;
    bool vary : 1;       /* its steps' work differs per device (wl_model_vary) */
    wl_axis reduce_axis; /* 0, or all-reduce the output over it */
    wl_coll coll;        /* the output is this collective of the input */
} wl_node;

_Static_assert(sizeof(wl_vjp) <= 16 && sizeof(wl_node) <= 40, "a vjp of 16 bytes, a node of 40 (invariant 3)");

struct wl_model {
    wl_graph *g;
    GArray *nodes;      /* wl_node */
    GArray *vjps;       /* wl_vjp */
    GArray *pool;       /* wl_tensor: every node's ins and every vjp's needs */
    GStringChunk *strings;
    /* Dense by tensor id (past the end: the default). */
    GArray *needs_grad; /* guint32: 1 when t needs a gradient */
    GArray *grads;      /* guint32: t's gradient tensor + 1 (0: none yet) */
    GArray *producer;   /* guint32: index of the node writing t + 1 (0: an argument) */
    GHashTable *remap;  /* tensor -> the tensor the current pass reads */
    GHashTable *kernels; /* node index -> wl_node_kernel * (wl_model_kernel) */
    GHashTable *vjp_kernels; /* vjp index -> wl_node_kernel *, its fwd the kernel (wl_model_vjp_kernel) */
    GHashTable *ckpt_names; /* node index -> its checkpoint name (static text) */
    GHashTable *batch_dots; /* node indices of dots with batch dimensions */
    GHashTable *scattered;  /* reduce-scatter node -> the dot node whose partial sums it reduces + 1 */
    GHashTable *partials;   /* dot nodes whose output a reduce-scatter reduces (invariant 7) */
    GHashTable *save_names; /* checkpoint names saved (owned strings), or NULL */
    GHashTable *offload_names; /* checkpoint names saved in host memory (owned strings), or NULL */
    GHashTable *host_copy;  /* offloaded tensor -> its host copy + 1 (emit) */
    GHashTable *reloads;    /* offloaded tensor -> its device copy, once issued */
    GHashTable *reload_ev;  /* offloaded tensor -> its reload's event number + 1 */
    guint offloads;         /* events offK.go and rlK.go / rlK.done issued */
    wl_remat remat;         /* of the emit under way */
    GPtrArray *axes;    /* const char *: the distinct mesh axes named, wl_axis - 1 indexing them */
    bool gathers;       /* some node is an all-gather (gathered again for the backward pass) */
    GHashTable *pending; /* regathered (or awaited) tensor -> its done event (owned), until main waits for it */
    guint regathers;     /* events rgK.go / rgK.done issued */
    int group;
    bool remat_ok;
    const wl_model_hooks *hooks;
    void *hooks_ud;
};

static guint32 dense_get(const GArray *a, wl_tensor t) { return t < a->len ? g_array_index(a, guint32, t) : 0; }

static void dense_set(GArray *a, wl_tensor t, guint32 v)
{
    if (t >= a->len)
        g_array_set_size(a, t + 1); /* cleared: new entries are 0 */
    g_array_index(a, guint32, t) = v;
}

static const wl_tensor *pool_at(const wl_model *m, uint32_t first)
{
    return first < m->pool->len ? &g_array_index(m->pool, wl_tensor, first) : NULL;
}

static const wl_node *node_at(const wl_model *m, guint i) { return &g_array_index(m->nodes, wl_node, i); }

static const wl_vjp *vjp_at(const wl_model *m, const wl_node *n, guint k)
{
    return &g_array_index(m->vjps, wl_vjp, n->first_vjp + k);
}

static gpointer node_key(const wl_model *m, const wl_node *n)
{
    return GUINT_TO_POINTER((guint)(n - (const wl_node *)(const void *)m->nodes->data));
}

wl_model *wl_model_new(wl_graph *g)
{
    wl_model *m = g_new0(wl_model, 1);
    m->g = g;
    m->nodes = g_array_new(FALSE, FALSE, sizeof(wl_node));
    m->vjps = g_array_new(FALSE, TRUE, sizeof(wl_vjp));
    m->pool = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    m->strings = g_string_chunk_new(1 << 16);
    m->needs_grad = g_array_new(FALSE, TRUE, sizeof(guint32));
    m->grads = g_array_new(FALSE, TRUE, sizeof(guint32));
    m->producer = g_array_new(FALSE, TRUE, sizeof(guint32));
    m->remap = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->axes = g_ptr_array_new();
    m->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    m->kernels = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    m->vjp_kernels = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    m->ckpt_names = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->batch_dots = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->scattered = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->partials = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->host_copy = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->reloads = g_hash_table_new(g_direct_hash, g_direct_equal);
    m->reload_ev = g_hash_table_new(g_direct_hash, g_direct_equal);
    return m;
}

void wl_model_free(wl_model *m)
{
    if (!m)
        return;
    g_array_free(m->nodes, TRUE);
    g_array_free(m->vjps, TRUE);
    g_array_free(m->pool, TRUE);
    g_string_chunk_free(m->strings);
    g_array_free(m->needs_grad, TRUE);
    g_array_free(m->grads, TRUE);
    g_array_free(m->producer, TRUE);
    g_hash_table_destroy(m->remap);
    g_ptr_array_free(m->axes, TRUE);
    g_hash_table_destroy(m->pending);
    g_hash_table_destroy(m->kernels);
    g_hash_table_destroy(m->vjp_kernels);
    g_hash_table_destroy(m->ckpt_names);
    g_hash_table_destroy(m->batch_dots);
    g_hash_table_destroy(m->scattered);
    g_hash_table_destroy(m->partials);
    if (m->save_names)
        g_hash_table_destroy(m->save_names);
    if (m->offload_names)
        g_hash_table_destroy(m->offload_names);
    g_hash_table_destroy(m->host_copy);
    g_hash_table_destroy(m->reloads);
    g_hash_table_destroy(m->reload_ev);
    g_free(m);
}

void wl_model_requires_grad(wl_model *m, wl_tensor t) { dense_set(m->needs_grad, t, 1); }

wl_graph *wl_model_graph(const wl_model *m) { return m->g; }

void wl_model_group(wl_model *m, int group, bool rematerializable)
{
    m->group = group;
    m->remat_ok = rematerializable;
}

static bool needs_grad(const wl_model *m, wl_tensor t) { return dense_get(m->needs_grad, t) != 0; }

/* The wl_axis of axis (NULL: 0), added to axes when new. */
static wl_axis axis_id(wl_model *m, const char *axis)
{
    if (!axis)
        return 0;
    for (guint i = 0; i < m->axes->len; i++)
        if (strcmp(g_ptr_array_index(m->axes, i), axis) == 0)
            return (wl_axis)(i + 1);
    g_assert(m->axes->len < UINT8_MAX);
    g_ptr_array_add(m->axes, (gpointer)axis);
    return (wl_axis)m->axes->len;
}

/* The axis named by id (0: NULL). */
static const char *axis_name(const wl_model *m, wl_axis id) { return id ? g_ptr_array_index(m->axes, id - 1) : NULL; }

uint32_t wl_model_node(wl_model *m, const char *label, wl_tensor out, const wl_tensor *ins, uint32_t n_ins,
                       double flops, bool is_dot)
{
    wl_node n = {0};
    n.label = g_string_chunk_insert(m->strings, label);
    n.out = out;
    n.first_in = m->pool->len;
    n.n_ins = n_ins;
    g_array_append_vals(m->pool, ins, n_ins);
    n.first_vjp = m->vjps->len;
    g_array_set_size(m->vjps, m->vjps->len + n_ins); /* cleared: no flops, no needs */
    n.flops = flops;
    n.is_dot = is_dot;
    n.group = m->group;
    n.remat_ok = m->remat_ok;
    for (uint32_t k = 0; k < n_ins; k++)
        if (needs_grad(m, ins[k]))
            wl_model_requires_grad(m, out);
    g_array_append_val(m->nodes, n);
    assert(!dense_get(m->producer, out)); /* invariant 1: no two nodes write the same tensor */
    dense_set(m->producer, out, m->nodes->len);
    return m->nodes->len - 1;
}

void wl_model_vjp(wl_model *m, uint32_t node, uint32_t k, double flops, const wl_tensor *needs, uint32_t n)
{
    const wl_node *nd = node_at(m, node);
    g_assert(k < nd->n_ins && n <= WL_VJP_MAX_NEEDS);
    wl_vjp *v = &g_array_index(m->vjps, wl_vjp, nd->first_vjp + k);
    v->flops = flops;
    v->first = m->pool->len;
    v->n = (uint8_t)n;
    g_array_append_vals(m->pool, needs, n);
}

static void set_kernel(wl_model *m, GHashTable *to, guint key, const char *fwd, const char *bwd, uint32_t n_dims,
                       const uint64_t *dims, const char *mask)
{
    g_assert(n_dims >= 1 && n_dims <= STRATA_MAX_DIMS);
    wl_node_kernel *k = g_new0(wl_node_kernel, 1);
    *k = (wl_node_kernel){fwd, bwd, mask ? g_string_chunk_insert_const(m->strings, mask) : NULL, n_dims, {0}};
    memcpy(k->dims, dims, n_dims * sizeof dims[0]);
    g_hash_table_replace(to, GUINT_TO_POINTER(key), k);
}

void wl_model_kernel(wl_model *m, uint32_t node, const char *fwd, const char *bwd, uint32_t n_dims,
                     const uint64_t *dims, const char *mask)
{
    g_assert(node < m->nodes->len);
    set_kernel(m, m->kernels, node, fwd, bwd, n_dims, dims, mask);
}

void wl_model_vjp_kernel(wl_model *m, uint32_t node, uint32_t k, const char *kernel, uint32_t n_dims,
                         const uint64_t *dims)
{
    g_assert(node < m->nodes->len && k < node_at(m, node)->n_ins);
    set_kernel(m, m->vjp_kernels, node_at(m, node)->first_vjp + k, kernel, NULL, n_dims, dims, NULL);
}

double wl_model_flops(const wl_model *m, uint32_t node, int k)
{
    const wl_node *n = node_at(m, node);
    return k < 0 ? n->flops : (uint32_t)k < n->n_ins ? vjp_at(m, n, (guint)k)->flops : 0;
}

/* A node whose output is collective `kind` of x over axis and whose input
 * gradient is collective `grad` of the output's. */
static uint32_t collective_node(wl_model *m, strata_op_kind kind, strata_op_kind grad, wl_tensor out, wl_tensor x,
                                const char *axis)
{
    uint32_t n = wl_model_node(m, strata_op_kind_name(kind), out, &x, 1, 0, false);
    wl_node *nd = &g_array_index(m->nodes, wl_node, n);
    wl_axis a = axis_id(m, axis);
    nd->coll = (wl_coll){(uint8_t)kind, a};
    g_array_index(m->vjps, wl_vjp, nd->first_vjp).coll = (wl_coll){(uint8_t)grad, a};
    return n;
}

uint32_t wl_model_all_gather(wl_model *m, wl_tensor out, wl_tensor x, const char *axis)
{
    m->gathers = true;
    return collective_node(m, STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER, out, x, axis);
}

uint32_t wl_model_reduce_scatter(wl_model *m, wl_tensor out, wl_tensor x, const char *axis)
{
    uint32_t n = collective_node(m, STRATA_OP_REDUCE_SCATTER, STRATA_OP_ALL_GATHER, out, x, axis);
    guint32 p = dense_get(m->producer, x);
    if (p && node_at(m, p - 1)->is_dot) { /* invariant 7 */
        g_hash_table_insert(m->scattered, GUINT_TO_POINTER(n), GUINT_TO_POINTER(p));
        g_hash_table_add(m->partials, GUINT_TO_POINTER(p - 1));
    }
    return n;
}

uint32_t wl_model_all_to_all(wl_model *m, wl_tensor out, wl_tensor x, const char *axis)
{
    return collective_node(m, STRATA_OP_ALL_TO_ALL, STRATA_OP_ALL_TO_ALL, out, x, axis);
}

uint32_t wl_model_ring_pass(wl_model *m, wl_tensor out, wl_tensor x, const char *axis)
{
    m->gathers = true; /* passed again before the backward pass */
    uint32_t n = collective_node(m, STRATA_OP_COLLECTIVE_PERMUTE, STRATA_OP_COLLECTIVE_PERMUTE, out, x, axis);
    wl_node *nd = &g_array_index(m->nodes, wl_node, n);
    g_array_index(m->vjps, wl_vjp, nd->first_vjp).coll.kind |= COLL_BACK;
    return n;
}

void wl_model_vary(wl_model *m, uint32_t node) { g_array_index(m->nodes, wl_node, node).vary = true; }

/* Whether node n's output is passed again (not saved) for the backward
 * pass: an all-gather's, a ring pass'. */
static bool is_passed_again(const wl_node *n)
{
    return n->coll.axis && (n->coll.kind == STRATA_OP_ALL_GATHER || COLL_KIND(n->coll) == STRATA_OP_COLLECTIVE_PERMUTE);
}

static int producer_group(const wl_model *m, wl_tensor t)
{
    guint32 p = dense_get(m->producer, t);
    return p ? node_at(m, p - 1)->group : G_MININT;
}

/* crossing[t] = 1 when a node of another group than t's producer reads t,
 * in its inputs or in what one of its gradients needs. */
static GArray *crossing_tensors(const wl_model *m)
{
    GArray *crossing = g_array_new(FALSE, TRUE, sizeof(guint32));
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *c = node_at(m, i);
        for (guint k = 0; k <= c->n_ins; k++) {
            /* k < n_ins: the needs of input k's gradient; k == n_ins: the inputs */
            const wl_vjp *v = k < c->n_ins ? vjp_at(m, c, k) : NULL;
            const wl_tensor *ts = pool_at(m, v ? v->first : c->first_in);
            uint32_t n = v ? v->n : c->n_ins;
            for (uint32_t j = 0; j < n; j++)
                if (producer_group(m, ts[j]) != c->group && dense_get(m->producer, ts[j]))
                    dense_set(crossing, ts[j], 1);
        }
    }
    return crossing;
}

void wl_model_checkpoint_name(wl_model *m, uint32_t node, const char *name)
{
    g_hash_table_insert(m->ckpt_names, GUINT_TO_POINTER(node), (gpointer)name);
}

void wl_model_batch_dot(wl_model *m, uint32_t node) { g_hash_table_add(m->batch_dots, GUINT_TO_POINTER(node)); }

void wl_model_remat_names(wl_model *m, const char *save, const char *offload)
{
    if (m->save_names)
        g_hash_table_destroy(m->save_names);
    if (m->offload_names)
        g_hash_table_destroy(m->offload_names);
    m->save_names = wl_remat_name_set(save);
    m->offload_names = wl_remat_name_set(offload);
}

/* The node whose dot-ness and checkpoint name a policy reads for n's
 * output (invariant 7): the dot a reduce-scatter n completes, n itself,
 * or NULL when n's output is a dot's partial sums. */
static const wl_node *policy_node(const wl_model *m, const wl_node *n)
{
    guint dot = GPOINTER_TO_UINT(g_hash_table_lookup(m->scattered, node_key(m, n)));
    if (dot)
        return node_at(m, dot - 1);
    return g_hash_table_contains(m->partials, node_key(m, n)) ? NULL : n;
}

/* Node n's checkpoint name, or NULL. */
static const char *ckpt_name(const wl_model *m, const wl_node *n)
{
    return g_hash_table_lookup(m->ckpt_names, node_key(m, n));
}

/* Whether node n's output is saved for the backward pass under remat. */
static bool is_saved(const wl_model *m, const wl_node *n, wl_remat remat, const GArray *crossing)
{
    if (is_passed_again(n))
        return false;
    if (remat == WL_REMAT_NONE || !n->remat_ok)
        return true;
    const wl_node *p = policy_node(m, n);
    if (p && p->is_dot && (remat == WL_REMAT_DOTS || (remat == WL_REMAT_DOTS_NO_BATCH &&
                                                      !g_hash_table_contains(m->batch_dots, node_key(m, p)))))
        return true;
    const char *name = p ? ckpt_name(m, p) : NULL;
    if (name && ((m->save_names && g_hash_table_contains(m->save_names, name)) ||
                 (m->offload_names && g_hash_table_contains(m->offload_names, name))))
        return true;
    return dense_get(crossing, n->out) != 0;
}

#define KEY(t) GUINT_TO_POINTER((guint)(t) + 1u)
#define VAL(p) ((wl_tensor)(GPOINTER_TO_UINT(p) - 1u))

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
    flags |= wl_graph_flags(g, t) & WL_VARY; /* per device as t is */
    wl_tensor c = wl_graph_tensor(g, name, tag, wl_graph_dtype(g, t), nd, dims, flags);
    g_free(name);
    return c;
}

/* Appends to ins the tensors ts[0..n), each through remap. */
static void append_mapped(GArray *ins, GHashTable *remap, const wl_tensor *ts, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        wl_tensor t = mapped(remap, ts[k]);
        g_array_append_val(ins, t);
    }
}

/* The step of node n writing out from ins: its compute, or its collective. */
static void emit_node(wl_model *m, const wl_node *n, const char *label, const GArray *ins, wl_tensor out)
{
    if (n->coll.axis && COLL_KIND(n->coll) == STRATA_OP_COLLECTIVE_PERMUTE)
        wl_graph_permute(m->g, out, g_array_index(ins, wl_tensor, 0), axis_name(m, n->coll.axis),
                         COLL_SHIFT(n->coll));
    else if (n->coll.axis)
        wl_graph_collective(m->g, (strata_op_kind)n->coll.kind, out, g_array_index(ins, wl_tensor, 0),
                            axis_name(m, n->coll.axis));
    else {
        wl_graph_compute(m->g, label, n->flops, (const wl_tensor *)ins->data, ins->len, &out, 1, NULL, 0);
        if (n->vary)
            wl_graph_vary_step(m->g);
        const wl_node_kernel *k = g_hash_table_lookup(m->kernels, node_key(m, n));
        if (k && !n->vary) /* a kernel's extents are the largest device's */
            wl_graph_kernel(m->g, k->fwd, k->n_dims, k->dims, k->mask);
    }
}

/* An all-reduce of t over axis when axis is set. */
static void reduce(wl_model *m, wl_tensor t, const char *axis)
{
    if (axis)
        wl_graph_collective(m->g, STRATA_OP_ALL_REDUCE, t, t, axis);
}

/* Node n's collective (an all-gather or a ring pass) of `in` into `out`
 * on stream `stream` from where main is (event rgK.go): a ring pass in the
 * forward pass (stream `ring`, overlapping the block computed meanwhile),
 * either again for the backward pass (stream `regather`, overlapping the
 * group's first gradients); main waits for rgK.done right before the first
 * step that reads out (await_regathers). */
/* Steps on `stream` from where main is: async_open records rgK.go on main
 * and waits for it on stream (returns K); async_close records rgK.done
 * there, returns to main and leaves `out` pending until main's first step
 * that reads it waits for rgK.done. */
static guint async_open(wl_model *m, const char *stream)
{
    char go[32];
    guint k = m->regathers++;
    g_snprintf(go, sizeof go, "rg%u.go", k);
    wl_graph_event(m->g, true, go);
    wl_graph_stream(m->g, stream);
    wl_graph_event(m->g, false, go);
    return k;
}

static void async_close(wl_model *m, guint k, wl_tensor out)
{
    char done[32];
    g_snprintf(done, sizeof done, "rg%u.done", k);
    wl_graph_event(m->g, true, done);
    wl_graph_stream(m->g, NULL);
    g_hash_table_insert(m->pending, KEY(out), g_strdup(done));
}

static void regather(wl_model *m, const wl_node *n, wl_tensor in, wl_tensor out, const char *stream)
{
    guint k = async_open(m, stream);
    GArray one = {(gchar *)&in, 1};
    emit_node(m, n, NULL, &one, out);
    async_close(m, k, out);
}

/* Before a step on main that reads ins: the waits for those regathered. */
static void await_regathers(wl_model *m, const GArray *ins)
{
    for (guint i = 0; i < ins->len && g_hash_table_size(m->pending); i++) {
        wl_tensor t = g_array_index(ins, wl_tensor, i);
        const char *done = g_hash_table_lookup(m->pending, KEY(t));
        if (!done)
            continue;
        wl_graph_event(m->g, false, done);
        g_hash_table_remove(m->pending, KEY(t));
    }
}

/* Whether node n's output goes to host memory between the passes: a
 * compute's, or a reduce-scatter's that completes a dot (invariant 7). */
static bool is_offloaded(const wl_model *m, const wl_node *n)
{
    const wl_node *p = policy_node(m, n);
    const char *name = p && (p != n || !n->coll.axis) ? ckpt_name(m, p) : NULL;
    return m->remat != WL_REMAT_NONE && n->remat_ok && name && m->offload_names &&
           g_hash_table_contains(m->offload_names, name);
}

/* After node n's forward step: its output copied to host memory on
 * stream `offload` once main has written it. */
static void offload(wl_model *m, const wl_node *n)
{
    char ev[32];
    guint k = m->offloads++;
    wl_tensor host = clone_tensor(m->g, n->out, "_host", wl_graph_tag(m->g, n->out), WL_TEMP);
    wl_graph_memory(m->g, host, "host");
    g_snprintf(ev, sizeof ev, "off%u.go", k);
    wl_graph_event(m->g, true, ev);
    wl_graph_stream(m->g, "offload");
    wl_graph_event(m->g, false, ev);
    wl_graph_copy(m->g, host, n->out);
    wl_graph_stream(m->g, NULL);
    g_hash_table_insert(m->host_copy, KEY(n->out), KEY(host));
}

/* The copies back to the device of group's offloaded outputs, issued on
 * stream `offload` after main records rlK.go here (once per group). */
static void issue_reloads(wl_model *m, int group)
{
    char ev[32];
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = node_at(m, i);
        if (n->group != group || !is_offloaded(m, n) || g_hash_table_contains(m->reloads, KEY(n->out)))
            continue;
        guint k = m->offloads++;
        wl_tensor host = VAL(g_hash_table_lookup(m->host_copy, KEY(n->out)));
        wl_tensor dev = clone_tensor(m->g, n->out, "_reload", wl_graph_tag(m->g, n->out), WL_TEMP);
        g_snprintf(ev, sizeof ev, "rl%u.go", k);
        wl_graph_event(m->g, true, ev);
        wl_graph_stream(m->g, "offload");
        wl_graph_event(m->g, false, ev);
        wl_graph_copy(m->g, dev, host);
        g_snprintf(ev, sizeof ev, "rl%u.done", k);
        wl_graph_event(m->g, true, ev);
        wl_graph_stream(m->g, NULL);
        g_hash_table_insert(m->reloads, KEY(n->out), KEY(dev));
        g_hash_table_insert(m->reload_ev, KEY(n->out), GUINT_TO_POINTER(k + 1));
    }
}

/* Before group's backward pass: its reloads (issued now if the previous
 * group did not), the next group's issued ahead, and main waiting for
 * this group's, whose device copies the pass reads. */
static void reload_group(wl_model *m, int group, GHashTable *remap)
{
    if (!m->offload_names)
        return;
    issue_reloads(m, group);
    int next = G_MININT; /* the group the backward pass visits next */
    for (guint i = 0; i < m->nodes->len && node_at(m, i)->group != group; i++)
        next = node_at(m, i)->group;
    if (next != G_MININT)
        issue_reloads(m, next);
    char ev[32];
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = node_at(m, i);
        if (n->group != group || !is_offloaded(m, n))
            continue;
        g_snprintf(ev, sizeof ev, "rl%u.done", GPOINTER_TO_UINT(g_hash_table_lookup(m->reload_ev, KEY(n->out))) - 1);
        wl_graph_event(m->g, false, ev);
        g_hash_table_insert(remap, KEY(n->out), g_hash_table_lookup(m->reloads, KEY(n->out)));
    }
}

/* Whether node n's gradient for input k is computed: a gradient flows into
 * n's output (the loss seeds one) and input k needs one. */
static bool vjp_runs(const wl_model *m, guint i, guint k)
{
    const wl_node *n = node_at(m, i);
    return (i + 1 == m->nodes->len || needs_grad(m, n->out)) && needs_grad(m, pool_at(m, n->first_in)[k]);
}

/* By node index: 1 when the node is recomputed before its group's
 * backward pass (invariant 8): unsaved, and its output read by a gradient
 * or by another recomputed node. jax.checkpoint's partial evaluation
 * (remat_partial_eval, jax/_src/ad_checkpoint.py) runs pe.dce_jaxpr on the
 * staged recomputation and keeps only the residuals it reads; XLA's HloDCE
 * removes what nobody reads. One pass in reverse suffices:
 * a node's readers come after it, and a reader in another group makes its
 * output cross the boundary, hence saved. */
static GArray *recompute_set(const wl_model *m, wl_remat remat, const GArray *crossing)
{
    GArray *read = g_array_new(FALSE, TRUE, sizeof(guint32)); /* by tensor: read by the backward pass */
    GArray *rec = g_array_new(FALSE, TRUE, sizeof(guint32));
    g_array_set_size(rec, m->nodes->len);
    for (guint i = m->nodes->len; i-- > 0;) {
        const wl_node *n = node_at(m, i);
        for (guint k = 0; k < n->n_ins; k++) {
            if (!vjp_runs(m, i, k))
                continue;
            const wl_vjp *v = vjp_at(m, n, k);
            for (uint32_t j = 0; j < v->n; j++)
                dense_set(read, pool_at(m, v->first)[j], 1);
        }
        if (is_saved(m, n, remat, crossing) || !dense_get(read, n->out))
            continue;
        g_array_index(rec, guint32, i) = 1;
        for (guint k = 0; k < n->n_ins; k++)
            dense_set(read, pool_at(m, n->first_in)[k], 1);
    }
    g_array_free(read, TRUE);
    return rec;
}

static void recompute_group(wl_model *m, int group, const GArray *recomputed, GHashTable *remap, GArray *ins)
{
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = node_at(m, i);
        if (n->group != group || !g_array_index(recomputed, guint32, i))
            continue;
        wl_tensor c = clone_tensor(m->g, n->out, "_remat", wl_graph_tag(m->g, n->out), WL_TEMP);
        g_array_set_size(ins, 0);
        append_mapped(ins, remap, pool_at(m, n->first_in), n->n_ins);
        if (is_passed_again(n)) {
            regather(m, n, g_array_index(ins, wl_tensor, 0), c, REGATHER_STREAM);
            g_hash_table_insert(remap, KEY(n->out), KEY(c));
            continue;
        }
        await_regathers(m, ins);
        char *label = g_strconcat(n->label, "_remat", NULL);
        emit_node(m, n, label, ins, c);
        g_free(label);
        reduce(m, c, axis_name(m, n->reduce_axis));
        g_hash_table_insert(remap, KEY(n->out), KEY(c));
    }
}

/* The kernel of node n's gradient for input k, on the step just added: its
 * own (wl_model_vjp_kernel), else the node's bwd on the first gradient
 * that has flops (the one backward kernel: flash attention's for q and kv). */
static void vjp_kernel(wl_model *m, const wl_node *n, guint k)
{
    const wl_node_kernel *kv = g_hash_table_lookup(m->vjp_kernels, GUINT_TO_POINTER(n->first_vjp + k)),
                         *kn = g_hash_table_lookup(m->kernels, node_key(m, n));
    guint first = 0;
    while (first < n->n_ins && vjp_at(m, n, first)->flops <= 0)
        first++;
    if (kv && !n->vary) /* a kernel's extents are the largest device's */
        wl_graph_kernel(m->g, kv->fwd, kv->n_dims, kv->dims, NULL);
    else if (kn && kn->bwd && !n->vary && k == first)
        wl_graph_kernel(m->g, kn->bwd, kn->n_dims, kn->dims, kn->mask);
}

/* The gradient computes of node i (whose output's gradient is dp + 1, 0 for
 * the loss): one per input that needs a gradient. */
static void emit_vjps(wl_model *m, guint i, guint32 dp, GHashTable *remap, GArray *ins, unsigned grad_flags)
{
    const wl_node *n = node_at(m, i);
    for (guint k = 0; k < n->n_ins; k++) {
        wl_tensor x = pool_at(m, n->first_in)[k];
        if (!needs_grad(m, x))
            continue;
        g_array_set_size(ins, 0);
        if (dp) {
            wl_tensor d = dp - 1;
            g_array_append_val(ins, d);
        }
        const wl_vjp *v = vjp_at(m, n, k);
        append_mapped(ins, remap, pool_at(m, v->first), v->n);
        guint32 gp = dense_get(m->grads, x);
        wl_tensor gx;
        if (gp) {
            gx = gp - 1;
            g_array_append_val(ins, gx); /* accumulate */
        } else {
            bool is_param = producer_group(m, x) == G_MININT;
            gx = clone_tensor(m->g, x, NULL, STRATA_TAG_GRAD, is_param ? grad_flags : WL_TEMP);
            dense_set(m->grads, x, gx + 1);
        }
        if (v->coll.axis) {
            g_assert(dp); /* a collective never seeds */
            bool ring = COLL_KIND(v->coll) == STRATA_OP_COLLECTIVE_PERMUTE;
            /* A ring pass' dKV goes back on stream `ring`, overlapping main's
             * next gradients, and is added to the block's own there. */
            guint ev = ring ? async_open(m, RING_STREAM) : 0;
            wl_tensor sum = gx;
            if (gp) /* accumulated: into a temporary, then added */
                gx = clone_tensor(m->g, x, "_pass", STRATA_TAG_GRAD, WL_TEMP);
            if (ring)
                wl_graph_permute(m->g, gx, dp - 1, axis_name(m, v->coll.axis), COLL_SHIFT(v->coll));
            else
                wl_graph_collective(m->g, COLL_KIND(v->coll), gx, dp - 1, axis_name(m, v->coll.axis));
            if (gp) {
                wl_tensor acc[2] = {gx, sum};
                char *label = g_strdup_printf("%s_vjp%u_add", n->label, k);
                wl_graph_compute(m->g, label, (double)wl_graph_elements(m->g, x), acc, 2, &sum, 1, NULL, 0);
                g_free(label);
            }
            if (ring)
                async_close(m, ev, sum);
            continue;
        }
        await_regathers(m, ins);
        char *label = g_strdup_printf("%s_vjp%u", n->label, k);
        wl_graph_compute(m->g, label, v->flops, (wl_tensor *)ins->data, ins->len, &gx, 1, NULL, 0);
        g_free(label);
        if (n->vary)
            wl_graph_vary_step(m->g);
        vjp_kernel(m, n, k);
        reduce(m, gx, axis_name(m, v->reduce_axis));
    }
}

/* Moves the pass from group `from` (G_MININT: none) to `to` (G_MININT:
 * the end): the hooks around it and an empty remap. */
static void switch_group(wl_model *m, int from, int to, bool backward)
{
    if (from != G_MININT && m->hooks && m->hooks->end)
        m->hooks->end(m->hooks_ud, from, backward);
    g_hash_table_remove_all(m->remap);
    if (to != G_MININT && m->hooks && m->hooks->begin)
        m->hooks->begin(m->hooks_ud, to, backward);
}

static void emit_forward(wl_model *m, GArray *ins)
{
    int cur_group = G_MININT;
    for (guint i = 0; i < m->nodes->len; i++) {
        const wl_node *n = node_at(m, i);
        if (n->group != cur_group) {
            switch_group(m, cur_group, n->group, false);
            cur_group = n->group;
        }
        g_array_set_size(ins, 0);
        append_mapped(ins, m->remap, pool_at(m, n->first_in), n->n_ins);
        if (n->coll.axis && COLL_KIND(n->coll) == STRATA_OP_COLLECTIVE_PERMUTE) {
            regather(m, n, g_array_index(ins, wl_tensor, 0), n->out, RING_STREAM);
            continue;
        }
        await_regathers(m, ins);
        emit_node(m, n, n->label, ins, n->out);
        reduce(m, n->out, axis_name(m, n->reduce_axis));
        if (is_offloaded(m, n))
            offload(m, n);
    }
    switch_group(m, cur_group, G_MININT, false);
}

void wl_model_emit(wl_model *m, wl_remat remat, unsigned grad_flags)
{
    GArray *ins = g_array_new(FALSE, FALSE, sizeof(wl_tensor));
    m->remat = remat;
    emit_forward(m, ins);
    GArray *crossing = remat != WL_REMAT_NONE ? crossing_tensors(m) : NULL;
    GArray *recomputed = recompute_set(m, remat, crossing);
    int cur_group = G_MININT;
    for (guint i = m->nodes->len; i-- > 0;) {
        const wl_node *n = node_at(m, i);
        if (n->group != cur_group) {
            switch_group(m, cur_group, n->group, true);
            cur_group = n->group;
            if (remat != WL_REMAT_NONE && n->remat_ok)
                reload_group(m, cur_group, m->remap);
            if ((remat != WL_REMAT_NONE && n->remat_ok) || m->gathers)
                recompute_group(m, cur_group, recomputed, m->remap, ins);
        }
        bool is_loss = i + 1 == m->nodes->len;
        guint32 dp = dense_get(m->grads, n->out);
        if (is_loss || dp)
            emit_vjps(m, i, dp, m->remap, ins, grad_flags); /* else no gradient flows through this node */
    }
    switch_group(m, cur_group, G_MININT, true);
    g_array_free(ins, TRUE);
    g_array_free(recomputed, TRUE);
    if (crossing)
        g_array_free(crossing, TRUE);
}

void wl_model_set_hooks(wl_model *m, const wl_model_hooks *hooks, void *ud)
{
    m->hooks = hooks;
    m->hooks_ud = ud;
}

void wl_model_substitute(wl_model *m, wl_tensor from, wl_tensor to, const char *event)
{
    g_hash_table_insert(m->remap, KEY(from), KEY(to));
    if (event)
        g_hash_table_insert(m->pending, KEY(to), g_strdup(event));
}

void wl_model_groups(const wl_model *m, GArray *out)
{
    for (guint i = 0; i < m->nodes->len; i++) {
        int gr = node_at(m, i)->group;
        if (i == 0 || node_at(m, i - 1)->group != gr)
            g_array_append_val(out, gr);
    }
}

/* add(ud, group, t) when t is a parameter: needs a gradient, no node writes it. */
static void visit_param(const wl_model *m, int group, wl_tensor t, wl_model_param_fn add, void *ud)
{
    if (needs_grad(m, t) && !dense_get(m->producer, t))
        add(ud, group, t);
}

void wl_model_pass_params(const wl_model *m, bool backward, wl_remat remat, bool as_emitted, wl_model_param_fn add,
                          void *ud)
{
    GArray *crossing = backward && remat != WL_REMAT_NONE ? crossing_tensors(m) : NULL;
    GArray *rec = crossing ? recompute_set(m, remat, crossing) : NULL;
    guint len = m->nodes->len;
    for (guint i = 0; i < len; i++) {
        guint at = backward ? len - 1 - i : i;
        const wl_node *n = node_at(m, at);
        if (rec && as_emitted && (at + 1 == len || node_at(m, at + 1)->group != n->group)) {
            guint j = at; /* as emitted: the group's recomputation, in forward order, before its gradients */
            while (j > 0 && node_at(m, j - 1)->group == n->group)
                j--;
            for (; j <= at; j++)
                for (guint k = 0; g_array_index(rec, guint32, j) && k < node_at(m, j)->n_ins; k++)
                    visit_param(m, n->group, pool_at(m, node_at(m, j)->first_in)[k], add, ud);
        }
        bool recomputed = rec && !as_emitted && g_array_index(rec, guint32, at);
        bool flows = at + 1 == len || needs_grad(m, n->out);
        for (guint k = 0; k < n->n_ins; k++) {
            wl_tensor x = pool_at(m, n->first_in)[k];
            if (!backward || recomputed)
                visit_param(m, n->group, x, add, ud);
            if (!backward || !flows || !needs_grad(m, x))
                continue;
            const wl_vjp *v = vjp_at(m, n, k);
            for (uint32_t j = 0; j < v->n; j++)
                visit_param(m, n->group, pool_at(m, v->first)[j], add, ud);
        }
    }
    if (crossing) {
        g_array_free(crossing, TRUE);
        g_array_free(rec, TRUE);
    }
}

void wl_model_reduce_out(wl_model *m, uint32_t node, const char *axis)
{
    g_array_index(m->nodes, wl_node, node).reduce_axis = axis_id(m, axis);
}

void wl_model_reduce_grad(wl_model *m, uint32_t node, uint32_t k, const char *axis)
{
    const wl_node *nd = node_at(m, node);
    g_assert(k < nd->n_ins);
    g_array_index(m->vjps, wl_vjp, nd->first_vjp + k).reduce_axis = axis_id(m, axis);
}

wl_tensor wl_model_grad(const wl_model *m, wl_tensor t)
{
    guint32 p = dense_get(m->grads, t);
    return p ? p - 1 : WL_NONE;
}
