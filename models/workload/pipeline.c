/*
 * pipeline.c: the pipeline-parallel training step (contract in
 * pipeline.h): each stage's program, its sends, and the file order that
 * joins them.
 *
 * Sizes per device and microbatch (b = batch / (data x microbatches)
 * sequences, s = seq, h = d_model, a = heads, t = the tensor axis):
 *   work      each layer runs the kernels Megatron's layer runs
 *             (layer_ops.h: its gemms, flash attention and elementwise
 *             ops, each naming its kernel so that the hardware's kernel
 *             models time it), forward in F; B runs the input-gradient
 *             ops (and, but for zb-h1, the weight-gradient ones, which
 *             zb-h1 defers to W), after the forward again under
 *             remat=full; the last chunk adds the head (final norm,
 *             output projection, cross entropy). Their gemms and
 *             attention together are the model's count
 *             (strata_model_step_flops) / t.
 *   saved     a layer keeps s b h (34 + 5 a s / h) bytes in 16 bits
 *             (Korthikanti et al. 2022, arXiv 2205.05198, §4.1: GPT's
 *             layer; ESTIMATE for gated MLPs and grouped-query attention,
 *             which store somewhat other tensors), s b h (10 + 24/t +
 *             5 a s/(h t)) under tensor parallelism and s b h (34 + 5 a s /
 *             h) / t with sequence parallelism; flash attention drops the
 *             5 a s / h term (no score matrix kept); remat=full keeps the
 *             layer input only, 2 s b h (/ t with sequence parallelism).
 *             Scaled by the dtype's bytes / 2. The last chunk keeps the
 *             logits in f32 for the loss, 4 s b V / t.
 *   message   s b h dtype bytes, / t with sequence parallelism (Megatron's
 *             tensor_shape, schedules.py:2115-2145), each way, per
 *             microbatch and chunk boundary.
 *   state     the stage's parameters (its layers; the embedding on rank 0,
 *             the output projection and final norm on rank p-1, as
 *             Megatron's pre_process / post_process place them) / t, in
 *             dtype (bf16 under f8: Transformer Engine casts them), their
 *             gradients (f32 with master weights: Megatron's main_grad;
 *             else as the parameters), AdamW's m and v (f32) and master
 *             weights (param_dtype). Under fsdp the parameters, gradients
 *             and optimizer state are sharded over `data` and the stage's
 *             weights are gathered once for the step (MaxText's
 *             pipeline_fsdp_ag_once), the gradients reduce-scattered at the
 *             end; under dp the gradients are all-reduced over `data` at
 *             the end of the stage's schedule, or with dist_opt
 *             (Megatron's distributed optimizer) reduce-scattered, the
 *             optimizer state sharded, and the updated parameters
 *             all-gathered.
 *   optimizer AdamW at memory speed: an elementwise kernel over the
 *             device's (shard of its) parameters with the bytes it moves
 *             (optimizer_step). With tied embeddings the first and last
 *             stages first exchange and add the word embedding's gradient
 *             (tied_exchange).
 *   embedding rank 0's first chunk runs the lookup (layer_ops.h
 *             wl_layer_ops_new_embed) before its layers, its gradient in W.
 * Expert parallelism (an `expert` axis of ep): b = batch / (data x ep x
 * microbatches); each device holds E / ep of a MoE layer's experts (the
 * state above less the other experts), the layers' all-to-alls run over
 * `expert` (layer_ops.h) through two buffers of T k d elements allocated
 * for the step, and at the end the experts' gradients (their own buffer)
 * are all-reduced over `data`, the others over `data,expert` (Megatron's
 * expert-data-parallel and data-parallel groups).
 * Tensor parallelism: two all-reduces over `model` of s b h dtype bytes per
 * layer in each of the forward and backward passes (Megatron's f and g;
 * with sequence parallelism an all-gather and reduce-scatter of the same
 * volume, written as the all-reduce it sums to).
 *
 * Invariants: ops are emitted op by op over a stage's devices (every
 * device of the stage at the same point of its program), a collective
 * over `model` or `data` once per group (device= its leader: the group
 * runs it) and a send once per sending device (device= the sender: its
 * collective-permute over `pipe`, the receiver's buffer allocated on the
 * receiver before it).
 */
#include "workload/pipeline.h"
#include "workload/layer_ops.h"
#include <stdarg.h>
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"

#define MAIN NULL
#define PIPE_AXIS "pipe"
#define MODEL_AXIS "model"
#define DATA_AXIS "data"
#define EXPERT_AXIS "expert"
#define DATA_EXPERT_AXES "data,expert"

typedef struct pl {
    const strata_model_shape *s;
    const wl_shard_plan *plan;
    const wl_pipe_step *st;
    strata_mesh *mesh;
    uint32_t pipe_mask, model_mask, data_mask, expert_mask;
    strata_op_list *ops;
    uint64_t K, lpc; /* chunks (p v) and layers per chunk */
    wl_layer_ops **layer_ops;        /* per layer of the model: its kernels on one device, one microbatch */
    wl_layer_ops *head_ops, *embed_ops;
    uint64_t act_chunk, act_head, msg, tp_bytes, a2a_bytes;
    GArray **devs;                   /* per rank: its devices (uint32_t, ascending) */
    GArray **model_leads, **data_leads; /* per rank: the leaders of its model and data groups */
    GArray **expert_leads, **dense_leads; /* per rank: of its expert groups, and of its data x expert groups */
    GString *n1, *n2, *n3; /* scratch names (n3: run_ops' labels) */
    bool ends_synced;      /* tied embeddings: one of the first and last ranks has synchronized */
} pl;

/* ---- ops ------------------------------------------------------------------ */

static void put(pl *c, strata_op *op, uint32_t device)
{
    op->has_device = true;
    op->device = device;
    strata_op_list_append(c->ops, op);
}

static const char *fmt(GString *into, const char *f, ...) G_GNUC_PRINTF(2, 3);
static const char *fmt(GString *into, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    g_string_vprintf(into, f, ap);
    va_end(ap);
    return into->str;
}

static void alloc_on(pl *c, uint32_t d, const char *stream, const char *name, uint64_t bytes, strata_tag tag,
                     strata_dtype dt)
{
    strata_op op = strata_op_make_alloc(stream, name, MAX(bytes, 1), NULL, tag);
    op.dtype = dt;
    put(c, &op, d);
}

static void free_on(pl *c, uint32_t d, const char *stream, const char *name)
{
    strata_op op = strata_op_make(STRATA_OP_FREE, stream, name);
    put(c, &op, d);
}

static void event_on(pl *c, uint32_t d, const char *stream, bool record, const char *event)
{
    strata_op op = strata_op_make(record ? STRATA_OP_RECORD : STRATA_OP_WAIT, stream, event);
    put(c, &op, d);
}

/* Over every device of rank r. */
static void alloc_all(pl *c, uint64_t r, const char *name, uint64_t bytes, strata_tag tag, strata_dtype dt)
{
    for (guint i = 0; i < c->devs[r]->len; i++)
        alloc_on(c, g_array_index(c->devs[r], uint32_t, i), MAIN, name, bytes, tag, dt);
}

static void free_all(pl *c, uint64_t r, const char *name)
{
    for (guint i = 0; i < c->devs[r]->len; i++)
        free_on(c, g_array_index(c->devs[r], uint32_t, i), MAIN, name);
}

static void wait_all(pl *c, uint64_t r, const char *event)
{
    for (guint i = 0; i < c->devs[r]->len; i++)
        event_on(c, g_array_index(c->devs[r], uint32_t, i), MAIN, false, event);
}

/* One kernel of layer_ops.h on every device of rank r. */
static void kernel_all(pl *c, uint64_t r, const char *label, const wl_layer_op *x)
{
    strata_op op = strata_op_make_compute(MAIN, label, x->flops, NULL, 0, NULL, 0, NULL);
    op.dtype = x->dtype;
    op.kernel = x->kernel;
    op.n_kdims = x->n_dims;
    memcpy(op.dims, x->dims, x->n_dims * sizeof op.dims[0]);
    op.mask = *x->mask ? x->mask : NULL;
    if (x->bytes > 0) {
        op.has_bytes = true;
        op.bytes = x->bytes;
    }
    for (guint i = 0; i < c->devs[r]->len; i++)
        put(c, &op, g_array_index(c->devs[r], uint32_t, i));
}

/* A collective once per group of rank r along the axis (leads: the groups' leaders). */
static void collective_groups(pl *c, GArray *leads, strata_op_kind kind, const char *out, const char *in,
                              const char *axis)
{
    for (guint i = 0; i < leads->len; i++) {
        strata_op op = strata_op_make_collective(kind, MAIN, out, in, axis, NULL, 0);
        put(c, &op, g_array_index(leads, uint32_t, i));
    }
}

/* The ops of o whose pass is in passes ("F", "B", "BW", "W"), labelled
 * PREFIX.NAME, each tensor-parallel collective after its op (an all-reduce
 * over `model`: two a layer each way, Megatron's f and g; with sequence
 * parallelism the all-gather and reduce-scatter of the same volume). */
static void run_ops(pl *c, uint64_t r, const wl_layer_ops *o, const char *passes, const char *prefix)
{
    GString *label = c->n3;
    for (uint32_t i = 0; i < wl_layer_ops_len(o); i++) {
        const wl_layer_op *x = wl_layer_ops_at(o, i);
        if (!strchr(passes, x->pass))
            continue;
        if (x->all_to_all) {
            collective_groups(c, c->expert_leads[r], STRATA_OP_ALL_TO_ALL, "a2a_out", "a2a_in", EXPERT_AXIS);
            continue;
        }
        g_string_printf(label, "%s.%s", prefix, x->name);
        kernel_all(c, r, label->str, x);
        if (x->tp_after && c->plan->t > 1)
            collective_groups(c, c->model_leads[r], STRATA_OP_ALL_REDUCE, "tp", NULL, MODEL_AXIS);
    }
}

/* The layers of chunk k: forward in order, or backward (and, under
 * remat=full, each layer's forward again before its backward) in reverse. */
static void run_layers(pl *c, uint64_t k, const char *passes, bool redo, const char *prefix)
{
    uint64_t r = k % c->plan->p;
    bool fwd = strchr(passes, 'F') != NULL;
    for (uint64_t j = 0; j < c->lpc; j++) {
        uint64_t l = k * c->lpc + (fwd ? j : c->lpc - 1 - j);
        if (redo)
            run_ops(c, r, c->layer_ops[l], "F", prefix);
        run_ops(c, r, c->layer_ops[l], passes, prefix);
    }
}

/* ---- sends ---------------------------------------------------------------- */

/* Chunk k's send of microbatch i to chunk k+1 (forward: y -> x) or k-1
 * (backward: gy -> g), on stream fK / bK of both ends. */
static void send(pl *c, uint64_t k, uint64_t i, bool forward)
{
    uint64_t r = k % c->plan->p, to = forward ? k + 1 : k - 1;
    char stream[32], in[48], out[48], done[48], got[48];
    g_snprintf(stream, sizeof stream, "%c%" G_GUINT64_FORMAT, forward ? 'f' : 'b', k);
    g_snprintf(in, sizeof in, forward ? "y%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT : "gy%" G_GUINT64_FORMAT
               ".%" G_GUINT64_FORMAT, k, i);
    g_snprintf(out, sizeof out, forward ? "x%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT : "g%" G_GUINT64_FORMAT
               ".%" G_GUINT64_FORMAT, to, i);
    g_snprintf(done, sizeof done, "%s.done", in);
    g_snprintf(got, sizeof got, "%s.got", out);
    for (guint j = 0; j < c->devs[r]->len; j++) {
        uint32_t d = g_array_index(c->devs[r], uint32_t, j);
        uint32_t q = strata_mesh_shifted(c->mesh, c->pipe_mask, d, forward ? 1 : -1);
        event_on(c, d, MAIN, true, done);
        event_on(c, d, stream, false, done);
        alloc_on(c, q, stream, out, c->msg, forward ? STRATA_TAG_ACTIVATION : STRATA_TAG_GRAD, c->st->dt);
        strata_op op = strata_op_make_collective(STRATA_OP_COLLECTIVE_PERMUTE, stream, out, in, PIPE_AXIS, NULL,
                                                 forward ? 1 : -1);
        put(c, &op, d);
        event_on(c, q, stream, true, got);
        free_on(c, d, stream, in);
    }
}

/* ---- actions ---------------------------------------------------------------- */

static void forward(pl *c, uint64_t k, uint64_t i)
{
    uint64_t r = k % c->plan->p;
    if (k > 0)
        wait_all(c, r, fmt(c->n1, "x%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT ".got", k, i));
    alloc_all(c, r, fmt(c->n1, "a%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i),
              c->act_chunk + (k == c->K - 1 ? c->act_head : 0), STRATA_TAG_ACTIVATION, c->st->dt);
    if (k == 0)
        run_ops(c, r, c->embed_ops, "F", fmt(c->n2, "F.embed.mb%" G_GUINT64_FORMAT, i));
    /* the first microbatch also casts the chunk's weights (TE's once-a-step casts) */
    run_layers(c, k, i == 0 ? "SF" : "F", false, fmt(c->n2, "F.k%" G_GUINT64_FORMAT ".mb%" G_GUINT64_FORMAT, k, i));
    if (k == c->K - 1) {
        run_ops(c, r, c->head_ops, "F", fmt(c->n2, "F.head.mb%" G_GUINT64_FORMAT, i));
        return;
    }
    alloc_all(c, r, fmt(c->n1, "y%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i), c->msg, STRATA_TAG_ACTIVATION,
              c->st->dt);
    send(c, k, i, true);
}

/* The activations of chunk k, microbatch i, and its received input, freed. */
static void release(pl *c, uint64_t k, uint64_t i)
{
    uint64_t r = k % c->plan->p;
    free_all(c, r, fmt(c->n1, "a%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i));
    if (k > 0)
        free_all(c, r, fmt(c->n1, "x%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i));
}

static void backward(pl *c, uint64_t k, uint64_t i)
{
    uint64_t r = k % c->plan->p;
    bool zb = c->plan->schedule == WL_PIPE_ZB_H1;
    const char *passes = zb ? "B" : "BW";
    if (k < c->K - 1)
        wait_all(c, r, fmt(c->n1, "g%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT ".got", k, i));
    else
        run_ops(c, r, c->head_ops, passes, fmt(c->n2, "B.head.mb%" G_GUINT64_FORMAT, i));
    run_layers(c, k, passes, c->st->remat_full, fmt(c->n2, "B.k%" G_GUINT64_FORMAT ".mb%" G_GUINT64_FORMAT, k, i));
    if (k == 0)
        run_ops(c, r, c->embed_ops, passes, fmt(c->n2, "B.embed.mb%" G_GUINT64_FORMAT, i));
    if (k < c->K - 1)
        free_all(c, r, fmt(c->n1, "g%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i));
    if (k > 0) {
        alloc_all(c, r, fmt(c->n1, "gy%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT, k, i), c->msg, STRATA_TAG_GRAD,
                  c->st->dt);
        send(c, k, i, false);
    }
    if (!zb)
        release(c, k, i);
}

static void weights(pl *c, uint64_t k, uint64_t i)
{
    if (k == c->K - 1)
        run_ops(c, k % c->plan->p, c->head_ops, "W", fmt(c->n2, "W.head.mb%" G_GUINT64_FORMAT, i));
    run_layers(c, k, "W", false, fmt(c->n2, "W.k%" G_GUINT64_FORMAT ".mb%" G_GUINT64_FORMAT, k, i));
    if (k == 0)
        run_ops(c, 0, c->embed_ops, "W", fmt(c->n2, "W.embed.mb%" G_GUINT64_FORMAT, i));
    release(c, k, i);
}

/* ---- the stage's state ---------------------------------------------------- */

/* The experts' weights in rank r's layers: elements of all E experts,
 * before / t. */
static double stage_experts(const pl *c, uint64_t r)
{
    const strata_model_shape *s = c->s;
    double one = (s->gated ? 3.0 : 2.0) * (double)s->d_model * (double)s->moe_ffn * (double)s->experts, n = 0;
    for (uint64_t v = 0; v < c->plan->v; v++)
        for (uint64_t j = 0; j < c->lpc; j++)
            n += strata_model_layer_is_moe(s, (int64_t)((v * c->plan->p + r) * c->lpc + j)) ? one : 0;
    return n;
}

/* Of them, the elements on one device of rank r (E / ep experts, / t). */
static uint64_t expert_elements(const pl *c, uint64_t r)
{
    return c->plan->e > 1 ? (uint64_t)(stage_experts(c, r) / (double)(c->plan->e * c->plan->t)) : 0;
}

/* Parameters (elements) on one device of rank r. */
static double stage_params(const pl *c, uint64_t r)
{
    const strata_model_shape *s = c->s;
    strata_model_shape none = *s;
    none.layers = 0;
    double total = 0, active = 0, fixed = 0;
    strata_model_shape_count(s, (int64_t)c->st->seq, &total, &active);
    strata_model_shape_count(&none, (int64_t)c->st->seq, &fixed, &active);
    double d = (double)s->d_model, V = (double)s->vocab;
    double n = (double)(c->plan->v * c->lpc) * (total - fixed) / (double)s->layers;
    if (r == 0)
        n += V * d + (s->rope ? 0 : (double)c->st->seq * d);
    if (r == c->plan->p - 1)
        n += V * d + d; /* the output projection (a copy of the embedding when tied) and the final norm */
    if (c->plan->e > 1) /* each device of an expert group holds E / ep experts */
        n -= stage_experts(c, r) * (1.0 - 1.0 / (double)c->plan->e);
    return n / (double)c->plan->t;
}

/* The parameters' dtype: the step's, but bf16 under f8 (Transformer
 * Engine keeps bf16 weights and casts them, layer_ops.h). */
static strata_dtype param_dtype(const pl *c)
{
    return c->st->dt == STRATA_DTYPE_F8 ? STRATA_DTYPE_BF16 : c->st->dt;
}

/* The gradients': f32 with master weights (Megatron's main_grad buffers:
 * gradients accumulated and reduced in fp32 for a 16-bit step,
 * NVIDIA/Megatron-LM@d98e8a64 megatron/training/arguments.py:1214-1216),
 * else the parameters'. */
static strata_dtype grad_dtype(const pl *c)
{
    return c->st->master != STRATA_DTYPE_NONE ? c->st->master : param_dtype(c);
}

static unsigned dtype_bytes(strata_dtype d)
{
    return strata_dtype_bits(d) / 8;
}

/* Whether the optimizer state is sharded over data (fsdp, or Megatron's
 * distributed optimizer under dp). */
static bool sharded_optimizer(const pl *c)
{
    return c->plan->data == WL_DATA_FSDP || (c->st->dist_opt && c->plan->n > 1);
}

/* The elements of rank r's optimizer step on one device (its shard under
 * fsdp or the distributed optimizer). */
static uint64_t shard_elements(const pl *c, uint64_t r)
{
    uint64_t e = (uint64_t)stage_params(c, r);
    return sharded_optimizer(c) ? (e + c->plan->n - 1) / c->plan->n : e;
}

static void prologue(pl *c, uint64_t r)
{
    strata_dtype pd = param_dtype(c), gd = grad_dtype(c);
    unsigned pb = dtype_bytes(pd), gb = dtype_bytes(gd);
    uint64_t e = shard_elements(c, r), n = c->plan->n, full = (uint64_t)stage_params(c, r);
    bool fsdp = c->plan->data == WL_DATA_FSDP;
    uint64_t opt = 8 + (c->st->master != STRATA_DTYPE_NONE ? dtype_bytes(c->st->master) : 0);
    bool sharded = sharded_optimizer(c); /* buffers padded to data x the shard */
    alloc_all(c, r, fsdp ? "params_shard" : "params", (fsdp ? e : sharded ? e * n : full) * pb, STRATA_TAG_PARAM, pd);
    alloc_all(c, r, "opt", e * opt, STRATA_TAG_OPTSTATE, STRATA_DTYPE_F32);
    uint64_t ex = expert_elements(c, r); /* fsdp and dist_opt have no expert axis (transformer_axes.c) */
    alloc_all(c, r, "grads", (sharded ? e * n : full - ex) * gb, STRATA_TAG_GRAD, gd);
    if (ex > 0)
        alloc_all(c, r, "grads_experts", ex * gb, STRATA_TAG_GRAD, gd);
    if (c->plan->t > 1)
        alloc_all(c, r, "tp", c->tp_bytes, STRATA_TAG_TEMP, c->st->dt);
    if (c->a2a_bytes > 0) {
        alloc_all(c, r, "a2a_in", c->a2a_bytes, STRATA_TAG_TEMP, c->st->dt);
        alloc_all(c, r, "a2a_out", c->a2a_bytes, STRATA_TAG_TEMP, c->st->dt);
    }
    if (fsdp) { /* the stage's weights gathered once for the step */
        alloc_all(c, r, "params", e * n * pb, STRATA_TAG_PARAM, pd);
        collective_groups(c, c->data_leads[r], STRATA_OP_ALL_GATHER, "params", "params_shard", DATA_AXIS);
    }
}

/* AdamW over u elements on every device of rank r, at memory speed: an
 * elementwise kernel (18 vector ops an element, as before) reading the
 * gradient, reading and writing m, v (f32) and the master weights, and
 * writing the parameters (with master weights a second pass reads the
 * master and writes the parameters: Megatron's
 * _copy_main_params_to_model_params); without master weights the
 * parameters are read and written in place. */
static void optimizer_step(pl *c, uint64_t r, uint64_t u)
{
    double mb = c->st->master != STRATA_DTYPE_NONE ? dtype_bytes(c->st->master) : 0;
    double pb = dtype_bytes(param_dtype(c)), gb = dtype_bytes(grad_dtype(c));
    wl_layer_op o = {.pass = 'S', .name = "adamw", .kernel = "elementwise", .n_dims = 1, .dims = {MAX(u, 1)},
                     .flops = 18.0 * (double)u, .dtype = STRATA_DTYPE_F32};
    o.bytes = (uint64_t)((double)u * (gb + 16 + (mb > 0 ? 3 * mb + pb : 2 * pb)));
    kernel_all(c, r, "adamw", &o);
}

/* Rank r's gradients reduced over data (and expert). */
static void grad_sync(pl *c, uint64_t r)
{
    strata_dtype gd = grad_dtype(c);
    uint64_t e = shard_elements(c, r);
    if (sharded_optimizer(c)) { /* gradients reduce-scattered over data */
        alloc_all(c, r, "grads_shard", e * dtype_bytes(gd), STRATA_TAG_GRAD, gd);
        collective_groups(c, c->data_leads[r], STRATA_OP_REDUCE_SCATTER, "grads_shard", "grads", DATA_AXIS);
        if (c->plan->data == WL_DATA_FSDP)
            free_all(c, r, "params");
        free_all(c, r, "grads");
    } else if (c->plan->e > 1) { /* the experts' gradients over data, the rest over data x expert */
        collective_groups(c, c->dense_leads[r], STRATA_OP_ALL_REDUCE, "grads", NULL,
                          c->plan->n > 1 ? DATA_EXPERT_AXES : EXPERT_AXIS);
        if (c->plan->n > 1 && expert_elements(c, r) > 0)
            collective_groups(c, c->data_leads[r], STRATA_OP_ALL_REDUCE, "grads_experts", NULL, DATA_AXIS);
    } else if (c->plan->n > 1)
        collective_groups(c, c->data_leads[r], STRATA_OP_ALL_REDUCE, "grads", NULL, DATA_AXIS);
}

/* With tied embeddings, the word embedding's gradient summed between the
 * first stage (the lookup's) and the last (the output projection's):
 * Megatron's _allreduce_word_embedding_grads over the embedding group of
 * those two ranks (NVIDIA/Megatron-LM@d98e8a64 megatron/core/distributed/
 * finalize_model_grads.py:164-202), after the data-parallel gradient sync
 * and before the optimizer. An all-reduce of two is one exchange: each
 * end sends its V d / t gradient elements to the other (a collective-
 * permute over pipe: rank 0 by -1, rank p-1 by +1, mod p) and adds what
 * it receives (an elementwise add: 2 reads, 1 write). */
static void tied_exchange(pl *c)
{
    strata_dtype gd = grad_dtype(c);
    uint64_t p = c->plan->p, n = (uint64_t)c->s->vocab * (uint64_t)c->s->d_model / c->plan->t;
    uint64_t bytes = n * dtype_bytes(gd);
    const uint64_t ends[2] = {0, p - 1};
    for (int j = 0; j < 2; j++) {
        uint64_t r = ends[j];
        int shift = j == 0 ? -1 : 1;
        alloc_all(c, r, "emb_grads", bytes, STRATA_TAG_GRAD, gd);
        for (guint i = 0; i < c->devs[r]->len; i++) {
            uint32_t d = g_array_index(c->devs[r], uint32_t, i);
            uint32_t q = strata_mesh_shifted(c->mesh, c->pipe_mask, d, shift);
            event_on(c, d, MAIN, true, "emb_grads.done");
            event_on(c, d, "tie", false, "emb_grads.done");
            alloc_on(c, q, "tie", "emb_peer", bytes, STRATA_TAG_GRAD, gd);
            strata_op op = strata_op_make_collective(STRATA_OP_COLLECTIVE_PERMUTE, "tie", "emb_peer", "emb_grads",
                                                     PIPE_AXIS, NULL, shift);
            put(c, &op, d);
            event_on(c, q, "tie", true, "emb_peer.got");
        }
    }
    wl_layer_op add = {.pass = 'S', .name = "tied_add", .kernel = "elementwise", .n_dims = 1, .dims = {n},
                       .flops = (double)n, .bytes = 3 * bytes, .dtype = gd};
    for (int j = 0; j < 2; j++) {
        wait_all(c, ends[j], "emb_peer.got");
        kernel_all(c, ends[j], "tied_embedding_allreduce", &add);
        free_all(c, ends[j], "emb_peer");
        free_all(c, ends[j], "emb_grads");
    }
}

/* Rank r's optimizer step, its parameters all-gathered under the
 * distributed optimizer, and its step buffers freed. */
static void step_end(pl *c, uint64_t r)
{
    strata_dtype pd = param_dtype(c);
    uint64_t e = shard_elements(c, r);
    optimizer_step(c, r, e);
    if (c->plan->data != WL_DATA_FSDP && sharded_optimizer(c)) {
        /* the distributed optimizer: each rank updated its 1/data of the
         * parameters, all-gathered into every replica's buffer
         * (Megatron's DistributedOptimizer, megatron/core/optimizer/
         * distrib_optimizer.py) */
        alloc_all(c, r, "params_shard", e * dtype_bytes(pd), STRATA_TAG_PARAM, pd);
        collective_groups(c, c->data_leads[r], STRATA_OP_ALL_GATHER, "params", "params_shard", DATA_AXIS);
        free_all(c, r, "params_shard");
    }
    if (c->plan->t > 1)
        free_all(c, r, "tp");
    if (c->a2a_bytes > 0) {
        free_all(c, r, "a2a_in");
        free_all(c, r, "a2a_out");
    }
}

/* ---- sizes and devices ---------------------------------------------------- */

/* Bytes a layer keeps for one microbatch on one device (see the header). */
static double layer_activations(const pl *c, uint64_t b)
{
    double s = (double)c->st->seq, h = (double)c->s->d_model, a = (double)c->s->heads, t = (double)c->plan->t;
    double sbh = s * (double)b * h, attn = c->st->flash ? 0 : 5 * a * s / h;
    double bytes = c->st->remat_full ? 2 * sbh / (c->plan->seq ? t : 1)
                   : c->plan->seq    ? sbh * (34 + attn) / t
                   : t > 1           ? sbh * (10 + 24 / t + attn / t)
                                     : sbh * (34 + attn);
    return bytes * (double)strata_dtype_bits(c->st->dt) / 16.0;
}

static void sizes(pl *c)
{
    const wl_shard_plan *p = c->plan;
    uint64_t b = c->st->batch / (p->n * p->e * p->m), dtb = strata_dtype_bits(c->st->dt) / 8;
    c->K = p->p * p->v;
    c->lpc = (uint64_t)c->s->layers / c->K;
    wl_layer_geom g = {b, c->st->seq, p->t, p->e, p->seq, c->st->flash, c->st->causal, c->st->dt, c->st->fp8};
    c->layer_ops = g_new0(wl_layer_ops *, c->K * c->lpc);
    for (uint64_t l = 0; l < c->K * c->lpc; l++) {
        c->layer_ops[l] = wl_layer_ops_new(c->s, &g, (int64_t)l);
        for (uint32_t i = 0; i < wl_layer_ops_len(c->layer_ops[l]); i++) {
            const wl_layer_op *x = wl_layer_ops_at(c->layer_ops[l], i);
            if (x->all_to_all)
                c->a2a_bytes = MAX(c->a2a_bytes, x->bytes);
        }
    }
    c->head_ops = wl_layer_ops_new_head(c->s, &g);
    c->embed_ops = wl_layer_ops_new_embed(c->s, &g);
    c->act_chunk = (uint64_t)(layer_activations(c, b) * (double)c->lpc);
    c->act_head = 4 * c->st->seq * b * (uint64_t)c->s->vocab / p->t;
    c->tp_bytes = c->st->seq * b * (uint64_t)c->s->d_model * dtb;
    c->msg = c->tp_bytes / (p->seq ? p->t : 1);
}

/* devs[r], and the leaders of rank r's model and data groups. */
static void devices(pl *c)
{
    uint32_t n = strata_mesh_devices(c->mesh);
    GArray ***lists[] = {&c->devs, &c->model_leads, &c->data_leads, &c->expert_leads, &c->dense_leads};
    for (size_t j = 0; j < G_N_ELEMENTS(lists); j++) {
        *lists[j] = g_new0(GArray *, c->plan->p);
        for (uint64_t r = 0; r < c->plan->p; r++)
            (*lists[j])[r] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    }
    uint32_t dense = c->data_mask | c->expert_mask;
    for (uint32_t d = 0; d < n; d++) {
        uint32_t r = strata_mesh_rank(c->mesh, c->pipe_mask, d);
        g_array_append_val(c->devs[r], d);
        if (c->model_mask && strata_mesh_member(c->mesh, c->model_mask, d, 0) == d)
            g_array_append_val(c->model_leads[r], d);
        if (c->data_mask && strata_mesh_member(c->mesh, c->data_mask, d, 0) == d)
            g_array_append_val(c->data_leads[r], d);
        if (c->expert_mask && strata_mesh_member(c->mesh, c->expert_mask, d, 0) == d)
            g_array_append_val(c->expert_leads[r], d);
        if (c->expert_mask && strata_mesh_member(c->mesh, dense, d, 0) == d)
            g_array_append_val(c->dense_leads[r], d);
    }
}

/* ---- the file order ------------------------------------------------------- */

/* Emits every rank's schedule in a topological order: a rank's next action
 * goes out once what it waits for (the previous chunk's forward, the next
 * chunk's backward, of the same microbatch) has. False: the schedule
 * deadlocks (a bug in its builder). */
/* Rank r's end: its gradients synchronized and its
 * optimizer step; with tied embeddings the first and last ranks' steps
 * wait for the exchange, emitted once both have synchronized. */
static void finish(pl *c, uint64_t r)
{
    uint64_t p = c->plan->p;
    bool tied = c->s->tie && p > 1, end = r == 0 || r == p - 1;
    grad_sync(c, r);
    if (!tied || !end) {
        step_end(c, r);
        return;
    }
    bool other_done = c->ends_synced;
    c->ends_synced = true;
    if (!other_done)
        return;
    tied_exchange(c);
    step_end(c, 0);
    step_end(c, p - 1);
}

static bool emit_schedules(pl *c)
{
    uint64_t p = c->plan->p, m = c->plan->m, left = p;
    GArray **acts = g_new0(GArray *, p);
    guint *at = g_new0(guint, p);
    uint8_t *fdone = g_new0(uint8_t, c->K * m), *bdone = g_new0(uint8_t, c->K * m);
    for (uint64_t r = 0; r < p; r++)
        acts[r] = wl_pipe_schedule_actions(c->plan->schedule, p, m, c->plan->v, r);
    bool progress = true;
    while (left && progress) {
        progress = false;
        for (uint64_t r = 0; r < p; r++) {
            while (at[r] < acts[r]->len) {
                const wl_pipe_action *a = &g_array_index(acts[r], wl_pipe_action, at[r]);
                uint64_t k = (uint64_t)a->chunk * p + r, i = a->mb;
                bool ready = a->kind == 'F'   ? k == 0 || fdone[(k - 1) * m + i]
                             : a->kind == 'B' ? k == c->K - 1 || bdone[(k + 1) * m + i]
                                              : true;
                if (!ready)
                    break;
                if (a->kind == 'F')
                    forward(c, k, i), fdone[k * m + i] = 1;
                else if (a->kind == 'B')
                    backward(c, k, i), bdone[k * m + i] = 1;
                else
                    weights(c, k, i);
                progress = true;
                if (++at[r] == acts[r]->len) {
                    finish(c, r);
                    left--;
                }
            }
        }
    }
    for (uint64_t r = 0; r < p; r++)
        g_array_free(acts[r], TRUE);
    g_free(acts);
    g_free(at);
    g_free(fdone);
    g_free(bdone);
    return left == 0;
}

strata_source *wl_pipeline_generate(const strata_model_shape *s, const wl_shard_plan *plan, const wl_pipe_step *st,
                                    GError **err)
{
    pl c = {.s = s, .plan = plan, .st = st, .ops = strata_op_list_new()};
    c.mesh = strata_mesh_parse(plan->mesh, NULL);
    g_assert(c.mesh); /* the plan parsed it */
    strata_mesh_axes(c.mesh, PIPE_AXIS, &c.pipe_mask, NULL);
    if (plan->t > 1)
        strata_mesh_axes(c.mesh, MODEL_AXIS, &c.model_mask, NULL);
    if (plan->n > 1)
        strata_mesh_axes(c.mesh, DATA_AXIS, &c.data_mask, NULL);
    if (plan->e > 1)
        strata_mesh_axes(c.mesh, EXPERT_AXIS, &c.expert_mask, NULL);
    c.n1 = g_string_new(NULL);
    c.n2 = g_string_new(NULL);
    c.n3 = g_string_new(NULL);
    sizes(&c);
    devices(&c);
    strata_op opt = strata_op_make_option("mesh", plan->mesh);
    strata_op_list_append(c.ops, &opt);
    for (uint64_t r = 0; r < plan->p; r++)
        prologue(&c, r);
    bool ok = emit_schedules(&c);
    GArray **lists[] = {c.devs, c.model_leads, c.data_leads, c.expert_leads, c.dense_leads};
    for (size_t j = 0; j < G_N_ELEMENTS(lists); j++) {
        for (uint64_t r = 0; r < plan->p; r++)
            g_array_free(lists[j][r], TRUE);
        g_free(lists[j]);
    }
    for (uint64_t l = 0; l < c.K * c.lpc; l++)
        wl_layer_ops_free(c.layer_ops[l]);
    g_free(c.layer_ops);
    wl_layer_ops_free(c.head_ops);
    wl_layer_ops_free(c.embed_ops);
    g_string_free(c.n1, TRUE);
    g_string_free(c.n2, TRUE);
    g_string_free(c.n3, TRUE);
    strata_mesh_free(c.mesh);
    if (!ok) {
        strata_op_list_free(c.ops);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "transformer: the pipeline schedule deadlocks");
        return NULL;
    }
    return strata_op_list_to_source(c.ops, "transformer");
}
