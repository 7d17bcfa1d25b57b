/*
 * transformer.c: `strata gen transformer`, one training step of a
 * decoder-only transformer (GPT-style, pre-layernorm) with AdamW.
 *
 * Schedule (one jitted step; B=batch, S=seq, d=d_model, V=vocab, H=heads):
 *   arguments  tokens, targets[B,S] int32 (input); embed[V,d] (tied with the
 *              output projection) and pos[S,d]; per layer ln1[d], wqkv[d,3d],
 *              wo[d,d], ln2[d], w1[d,4d], w2[4d,d]; lnf[d] (param, `dtype`);
 *              AdamW's m_P and v_P for every parameter P (optstate, f32).
 *   forward    h_0 = embed[tokens] + pos (gather, B*S*d flops); per layer l:
 *                a = layernorm(h; ln1)            8 flops/element
 *                qkv = a @ wqkv                   2*B*S*d*3d
 *                scores = q @ k^T  [B,H,S,S]      2*B*S*S*d (a dot)
 *                probs = softmax(scores)          5 flops/element
 *                ctx = probs @ v   [B,S,d]        2*B*S*S*d (a dot)
 *                o = ctx @ wo; h1 = h + o         2*B*S*d^2
 *                b = layernorm(h1; ln2)
 *                u = b @ w1 [B,S,4d]; g = gelu(u); f = g @ w2; h' = h1 + f
 *              then hf = layernorm(h_L; lnf), logits = hf @ embed^T [B,S,V],
 *              loss = cross-entropy(logits, targets).
 *   backward   reverse mode (autodiff.h): each matmul's two gradients cost
 *              what its forward does; the embedding gradient accumulates
 *              from the output projection and the gather.
 *   kernels    every matmul step, forward and gradient, names kernel=gemm
 *              with the extents the device computes (autodiff_nodes.h:
 *              C = A B is MxKxN, dA = dC B^T MxNxK, dB = A^T dC KxMxN; the
 *              attention products and the experts batched BxMxKxN), so
 *              that hardware with a matrix model (matrix = systolic or
 *              tiles) times it by models/kernel/gemm.c, elsewhere at the
 *              roofline as before; left on the roofline: steps whose flops
 *              are not one GEMM (a biased projection's forward, q k^T's
 *              gradient) and the experts' steps under an imbalanced load
 *              (their work differs per device).
 *   remat      none saves every activation; full saves only each layer's
 *              input h_l and recomputes the layer before its backward; dots
 *              saves the matmul outputs (qkv, scores, ctx, o, u, f) and
 *              recomputes layernorms, softmax and GELU.
 *   optimizer  AdamW per parameter (18 flops per element), in place through
 *              donate=P,m_P,v_P: new_P (param), new_m_P, new_v_P (optstate)
 *              are the outputs; optimizer=sgd: new_P = P - lr g (2 flops per
 *              element, no state; MaxText's opt_type=sgd).
 *   shapes     the model keys of model_config.h (config=FILE reads a Hugging
 *              Face config.json into them) change the layer as
 *              transformer_layer.c says: grouped-query attention, head_dim,
 *              the MLP's width and gated MLPs, RMSNorm, rotary positions (no
 *              pos parameter), q/k norms, q/k/v biases, post-norms, untied
 *              output projection (`unembed`, [V,d]), MoE layers, MLA;
 *              attention=flash runs it as one flash kernel (mask=causal);
 *              param_dtype=f32 keeps f32 master weights (master_P) in the
 *              optimizer state beside m_P and v_P, sharded as they are;
 *              the step gathers and computes with the `dtype` copy, as
 *              XLA does once its ConvertMover has moved the narrowing
 *              convert of an f32 weight ahead of the all-gather.
 *   sharding   over `mesh=data:N[,model:T]` (shard.h), each device's program:
 *              the data axis splits the batch (B/N per device); dp
 *              all-reduces each gradient, fsdp shards parameters, gradients
 *              and optimizer state (P_shard: 1/N, flat) and all-gathers each
 *              group's parameters before its forward and its backward pass
 *              (`prefetch` groups ahead). tp over the model axis (Megatron):
 *              wqkv [d,3d/T] and w1 [d,4d/T] column-parallel, wo [d/T,d] and
 *              w2 [4d/T,d] row-parallel with an all-reduce of their output
 *              over `model` (and of the input gradients of wqkv and w1 in
 *              the backward pass); H/T heads per device; the embedding is
 *              vocabulary-parallel ([V/T,d]: h_0 and the gradient of lnf_out
 *              all-reduced, logits [B,S,V/T]); layernorm scales and pos are
 *              replicated. With sequence parallelism (tp+sp, fsdp+tp+sp)
 *              the layernorms, residual adds and h_l hold S/T positions
 *              ([B,S/T,d]); each column-parallel block's input is
 *              all-gathered over `model` (NAME_ag, gathered again on
 *              stream `regather` for the layer's backward pass: only the
 *              shard is kept), each
 *              row-parallel output and h_0 reduce-scattered (NAME_rs), the
 *              converse in the backward pass, and the layernorm scales'
 *              gradients all-reduced over `model`. The vocabulary-parallel
 *              cross-entropy's two [B,S] all-reduces (max, sum) are not
 *              modelled. The `expert` and `context` axes (expert and
 *              context parallelism) are transformer_axes.c's,
 *              transformer_layer.c's experts and transformer_ring.c's.
 */
#include "workload/workload.h"
#include "workload/pipeline.h"
#include "workload/shard.h"
#include "workload/transformer.h"
#include "workload/moe_load.h"
#include "workload/collective_matmul.h"
#include "core/error.h"

static const char *const sharding_choices[] = {"none", "dp", "fsdp", "tp", "tp+sp", "fsdp+tp", "fsdp+tp+sp", NULL};
static const char *const pipe_schedule_choices[] = {"gpipe", "1f1b", "interleaved", "zb-h1", NULL};
static const char *const optimizer_choices[] = {"adamw", "sgd", NULL};
static const char *const attention_choices[] = {"full", "flash", NULL};
static const char *const mask_choices[] = {"none", "causal", NULL};
static const char *const fp8_choices[] = {"delayed", "current", "none", NULL};
static const char *const on_off_choices[] = {"off", "on", NULL};
#define MODEL_AXIS TF_MODEL_AXIS

/* The graph is held while generating (~6.5 KB a layer): measured 10000
 * layers in 1.4 s and 95 MB peak RSS unsharded, 10 s and 150 MB with
 * fsdp+tp+sp and remat=full; a million layers would take ~6.5 GB. */
#define TRANSFORMER_MAX_LAYERS 10000

static const strata_param_def transformer_params[] = {
    {"layers", STRATA_PARAM_INT, "12", "decoder layers", NULL},
    {"d_model", STRATA_PARAM_INT, "768", "model width d (HF hidden_size)", NULL},
    {"heads", STRATA_PARAM_INT, "12", "attention heads (without head_dim: must divide d_model)", NULL},
    {"seq", STRATA_PARAM_INT, "1024", "sequence length", NULL},
    {"batch", STRATA_PARAM_INT, "8", "sequences per step", NULL},
    {"vocab", STRATA_PARAM_INT, "32000", "vocabulary size", NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("dtype", "bf16", "element type of parameters and activations (optimizer state is "
                                "f32; param_dtype adds master weights)"),
    {"remat", STRATA_PARAM_STRING, "none",
     "rematerialization of each layer: none, full or dots, or a policy by JAX's or MaxText's name "
     "(nothing_saveable, dots_saveable, dots_with_no_batch_dims_saveable, minimal, minimal_flash, save_qkv_proj, "
     "save_out_proj, save_dot_except_mlp, save_dot_except_mlpwi, save_dot_with_context_except_mlp; host offload: "
     "minimal_offloaded, qkv_proj_offloaded, save_and_offload_only_these_names with remat_save= and remat_offload=)",
     NULL},
    {"mesh", STRATA_PARAM_STRING, "", "device mesh: axes data, fsdp, tensor (or model), pipe (or stage), expert, "
     "context with their sizes, e.g. data:N,model:T or pipe:4,fsdp:4,tensor:4 (empty: one device)", NULL},
    {"sharding", STRATA_PARAM_STRING, "none",
     "none, dp (replicas, gradients all-reduced over data), fsdp (ZeRO-3 over data), tp (Megatron over model; "
     "dp over data if any), fsdp+tp, or tp+sp / fsdp+tp+sp (tp with sequence parallelism: layernorms and residuals "
     "split along seq over model, all-gather before and reduce-scatter after each parallel block)",
     sharding_choices},
    {"schedule", STRATA_PARAM_STRING, NULL, "pipe axis: the pipeline schedule, gpipe, 1f1b (default), interleaved "
     "(virtual stages) or zb-h1 (zero bubble: weight gradients deferred)", pipe_schedule_choices},
    {"microbatches", STRATA_PARAM_INT, NULL, "pipe axis: microbatches per step per pipeline (default: pipe)", NULL},
    {"virtual", STRATA_PARAM_INT, NULL, "interleaved schedule: model chunks per pipe rank (default 2)", NULL},
    {"vp", STRATA_PARAM_INT, NULL, "the same as virtual", NULL},
    {"fp8", STRATA_PARAM_STRING, NULL, "pipe axis, dtype=f8: Transformer Engine's scaling recipe, delayed "
     "(default), current (an amax pass before each cast) or none (no cast kernels)", fp8_choices},
    {"dist_opt", STRATA_PARAM_STRING, NULL, "pipe axis with dp: Megatron's distributed optimizer, on (ZeRO-1: "
     "gradients reduce-scattered over data, each replica updates 1/data, parameters all-gathered) or off "
     "(default)", on_off_choices},
    {"prefetch", STRATA_PARAM_INT, "1", "fsdp: how many layers ahead each layer's parameters are all-gathered",
     NULL},
    {"scan_layers", STRATA_PARAM_BOOL, NULL, "fsdp: the layers as one XLA while loop (MaxText's scan_layers): "
     "a layer's all-gathers are issued when it starts, one at a time, each awaited at its parameter's first use "
     "(no prefetch across the loop's iterations); unset: false", NULL},
    {"collective_matmul", STRATA_PARAM_INT, NULL, "tp+sp: XLA's windowed einsum threshold in MiB "
     "(xla_jf_spmd_threshold_for_windowed_einsum_mib): each all-gather over `model` of at least that many MiB "
     "(gathered) and its gemm, and each gemm and its reduce-scatter over `model` (the partial sums), overlapped "
     "as XLA's collective matmul loops them (collective_matmul.h); unset: off", NULL},
    STRATA_MODEL_KEYS(STRATA_MODEL_PARAM_DEF)
    {"remat_save", STRATA_PARAM_STRING, NULL, "remat=save_and_offload_only_these_names: checkpoint names saved on "
     "the device, separated by ':' (qkv_proj, out_proj, mlpwi_0, mlpwi_1, mlpwi, mlpwo, context, query_proj, "
     "key_proj)", NULL},
    {"remat_offload", STRATA_PARAM_STRING, NULL, "remat=save_and_offload_only_these_names: checkpoint names saved "
     "in host memory (`host`), separated by ':'", NULL},
    {"attention", STRATA_PARAM_STRING, NULL, "full (the score matrix stored; default) or flash (one "
     "kernel=flash-attention, no score matrix)", attention_choices},
    {"mask", STRATA_PARAM_STRING, NULL, "attention mask: none (default) or causal (halves flash attention's "
     "work; the full form computes the whole matrix either way)", mask_choices},
    {"optimizer", STRATA_PARAM_STRING, NULL, "adamw (default: m_P, v_P in f32) or sgd (optax.sgd, MaxText's "
     "opt_type=sgd: no optimizer state)", optimizer_choices},
    {"capacity_factor", STRATA_PARAM_DOUBLE, NULL, "MoE: each expert takes at most ceil(tokens x top_k / experts x "
     "capacity_factor) rows per device, the rest dropped, buffers padded to it (Switch, GShard; unset: dropless, "
     "Megatron's default)", NULL},
    {"imbalance", STRATA_PARAM_STRING, NULL, "MoE: the experts' load: uniform (default), zipf:S (expert e's share "
     "~ 1/(e+1)^S) or FILE (one token count per expert and line)", NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("param_dtype", NULL, "element type of the master weights (default dtype: none; f32: "
                                "master_P kept and updated beside the optimizer state, the step computing with a "
                                "dtype copy)"),
    {NULL, 0, NULL, NULL, NULL},
};

wl_tensor tf_param(tf_ctx *c, const char *name, uint32_t nd, const uint64_t *dims)
{
    wl_tensor t = wl_graph_tensor(c->g, name, STRATA_TAG_PARAM, c->dt, nd, dims, WL_ARGUMENT);
    wl_model_requires_grad(c->m, t);
    g_array_append_val(c->params, t);
    return t;
}

wl_tensor tf_act(tf_ctx *c, const char *name, uint32_t nd, const uint64_t *dims)
{
    return wl_graph_tensor(c->g, name, STRATA_TAG_ACTIVATION, c->dt, nd, dims, WL_TEMP);
}

/* y = norm(x) * scale: layernorm 8 flops per element forward, 14
 * backward; RMSNorm 4 and 8 (no mean). Under sequence parallelism x is
 * the device's part of the sequence, so the scale's gradient is a partial
 * sum over the model axis. */
void tf_norm(tf_ctx *c, const tf_dims *z, const char *label, wl_tensor y, wl_tensor x, wl_tensor scale)
{
    double n = (double)wl_graph_elements(c->g, x);
    bool rms = z->s->rmsnorm;
    wl_tensor ins[2] = {x, scale};
    uint32_t node = wl_model_node(c->m, label, y, ins, 2, (rms ? 4 : 8) * n, false);
    wl_model_vjp(c->m, node, 0, (rms ? 8 : 14) * n, ins, 2);
    wl_model_vjp(c->m, node, 1, 3 * n, &x, 1);
    if (z->sp)
        wl_model_reduce_grad(c->m, node, 1, MODEL_AXIS);
}

/* Checks that `value` (the resolved key `name`) divides by `by`, the size of mesh axis `axis`. */
static bool divides(const char *name, int64_t value, uint64_t by, const char *axis, GError **err)
{
    if (by <= 1 || value % (int64_t)by == 0)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "transformer: expected %s (%" G_GINT64_FORMAT ") to divide by the %s axis' %" G_GUINT64_FORMAT, name,
                value, axis, by);
    return false;
}

/* The pipe axis' parameters into plan: schedule, microbatches (default
 * pipe), virtual (or vp; interleaved only, default 2). */
static bool transformer_pipe_params(const strata_params *p, wl_shard_plan *plan, GError **err)
{
    static const char *const names[] = {"gpipe", "1f1b", "interleaved", "zb-h1"};
    const char *sched = strata_params_is_set(p, "schedule") ? strata_params_string(p, "schedule") : "1f1b";
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(sched, names[i]) == 0)
            plan->schedule = (wl_pipe_schedule)i;
    bool virt = strata_params_is_set(p, "virtual"), vp = strata_params_is_set(p, "vp");
    int64_t m = strata_params_int_or(p, "microbatches", (int64_t)plan->p);
    int64_t v = virt ? strata_params_int(p, "virtual") : vp ? strata_params_int(p, "vp") : 2;
    const char *why = virt && vp                                                  ? "give virtual or vp, not both"
                      : m < 1                                                     ? "expected microbatches >= 1"
                      : v < 1                                                     ? "expected virtual (vp) >= 1"
                      : (virt || vp) && plan->schedule != WL_PIPE_INTERLEAVED     ? "virtual (vp) needs schedule=interleaved"
                      : plan->p == 1 && (strata_params_is_set(p, "schedule") || strata_params_is_set(p, "microbatches"))
                          ? "schedule and microbatches need a pipe axis in the mesh (e.g. mesh=pipe:4,data:2)"
                      /* read by transformer_pipeline only: without a pipe axis each was taken, the trace unchanged */
                      : plan->p == 1 && (strata_params_is_set(p, "fp8") || strata_params_is_set(p, "dist_opt"))
                          ? "fp8 and dist_opt are the pipeline step's (Megatron's): expected a pipe axis in the mesh "
                            "(e.g. mesh=pipe:4,data:2) beside them, got none: they change nothing"
                      : strata_params_is_set(p, "fp8") && strata_workload_dtype(p, "dtype") != STRATA_DTYPE_F8
                          ? "fp8 is the scaling recipe of FP8 casts: expected dtype=f8 beside it, got dtype="
                          : NULL;
    if (why) {
        bool dt = g_str_has_suffix(why, "dtype=");
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "transformer: %s%s%s", why,
                    dt ? strata_params_string(p, "dtype") : "", dt ? ": it changes nothing" : "");
        return false;
    }
    plan->m = (uint64_t)m;
    plan->v = plan->schedule == WL_PIPE_INTERLEAVED ? (uint64_t)v : 1;
    return true;
}

/* The sharding's checks: the mesh fits the sharding and its axes divide
 * the shapes they split (fsdp: every parameter's elements, flat). */
static bool transformer_check_shard(const strata_params *p, const strata_model_shape *s, wl_shard_plan *plan,
                                    GError **err)
{
    static const char *const by_model[] = {"heads", "d_model", "vocab", NULL};
    if (!wl_shard_plan_parse(p, "transformer", plan, err) || !transformer_pipe_params(p, plan, err) ||
        !wl_shard_check_divides(p, "transformer", "batch", plan->n, "data", err))
        return false;
    wl_shard_sizes sizes = {(uint64_t)s->layers, (uint64_t)strata_params_int(p, "batch"),
                            (uint64_t)strata_params_int(p, "seq"), s->experts};
    if (!wl_shard_plan_rules(plan, &sizes, "transformer", err) || !tf_axes_check(p, s, plan, err))
        return false;
    if (plan->data == WL_DATA_FSDP && !wl_shard_check_divides(p, "transformer", "d_model", plan->n, "data", err))
        return false;
    plan->scan = strata_params_is_set(p, "scan_layers") && strata_params_bool(p, "scan_layers");
    if (plan->scan && plan->data != WL_DATA_FSDP) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: scan_layers=true schedules fsdp's all-gathers; expected sharding=fsdp (or fsdp+tp...)");
        return false;
    }
    for (const char *const *name = by_model; *name; name++)
        if (!wl_shard_check_divides(p, "transformer", *name, plan->t, MODEL_AXIS, err))
            return false;
    if (s->kv_lora_rank > 0 && plan->t > 1) {
        g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "transformer: MLA (kv_lora_rank > 0) runs on one device or a data axis only "
                            "(no model axis)");
        return false;
    }
    uint64_t n = plan->data == WL_DATA_FSDP ? plan->n : 1;
    int64_t qkv_cols = (s->heads + 2 * s->kv_heads) * s->head_dim / (int64_t)plan->t;
    if (!divides("kv_heads", s->kv_heads, plan->t, MODEL_AXIS, err) ||
        !divides("ffn", s->ffn, plan->t, MODEL_AXIS, err) ||
        (s->experts > 0 && !divides("moe_ffn", s->moe_ffn, plan->t, MODEL_AXIS, err)) ||
        (s->qk_norm && !divides("2*head_dim", 2 * s->head_dim, n, "data", err)) ||
        (s->qkv_bias && !divides("(heads+2*kv_heads)*head_dim/T", qkv_cols, n, "data", err)) ||
        (s->kv_lora_rank > 0 && !divides("q_lora_rank", s->q_lora_rank, n, "data", err)) ||
        (s->kv_lora_rank > 0 && !divides("kv_lora_rank", s->kv_lora_rank, n, "data", err)))
        return false;
    if (strata_params_is_set(p, "collective_matmul") && (plan->t <= 1 || plan->p > 1)) {
        /* read over the model axis, by the step without a pipeline alone */
        g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "transformer: collective_matmul: expected a model axis in the mesh and no pipe axis "
                            "(sharding=tp+sp, e.g. mesh=data:2,model:4), where its loops run");
        return false;
    }
    return !plan->seq || wl_shard_check_divides(p, "transformer", "seq", plan->t, MODEL_AXIS, err);
}

/* Checks that the largest tensors of shape s fit in 64 bits (the keys
 * check_sizes cannot name: they may be unset). */
static bool shape_sizes_ok(const strata_model_shape *s, const strata_params *p, GError **err)
{
    double B = (double)strata_params_int(p, "batch"), S = (double)strata_params_int(p, "seq"), d = (double)s->d_model;
    double E = (double)(s->experts > 0 ? s->experts : 1), k = (double)(s->top_k > 0 ? s->top_k : 1);
    double big[] = {B * S * (double)s->ffn, d * (double)s->ffn, E * d * (double)s->moe_ffn,
                    B * S * k * (double)s->moe_ffn, B * S * k * d,
                    B * S * (double)(s->heads + 2 * s->kv_heads) * (double)s->head_dim,
                    B * S * (double)s->heads * (double)(s->qk_nope_head_dim + s->qk_rope_head_dim + s->v_head_dim),
                    (double)s->layers * E * 3 * d * (double)s->moe_ffn};
    double total = 0, active = 0;
    strata_model_shape_count(s, strata_params_int(p, "seq"), &total, &active);
    for (size_t i = 0; i < G_N_ELEMENTS(big); i++)
        if (big[i] * 8 > 0x1p62 || total * 16 > 0x1p62) { /* 16: param, m, v, master bytes */
            g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                                "transformer: the model's tensors (batch x seq x ffn, experts x d_model x moe_ffn, "
                                "the parameters and their optimizer state, ...) overflow 64 bits");
            return false;
        }
    return true;
}

/* remat_save= and remat_offload=: read by remat=save_and_offload_only_these_names
 * alone, each name one a layer's checkpoint carries (a name none carries
 * would save nothing, silently). */
static bool remat_names_ok(const strata_params *p, const char *remat, GError **err)
{
    static const char *const keys[] = {"remat_save", "remat_offload"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (!strata_params_is_set(p, keys[i]))
            continue;
        if (!g_str_equal(remat, "save_and_offload_only_these_names")) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "transformer: %s: expected remat=save_and_offload_only_these_names, which reads it, got "
                        "remat=%s", keys[i], remat);
            return false;
        }
        if (!wl_remat_names_check("transformer", keys[i], strata_params_string(p, keys[i]), err))
            return false;
    }
    return true;
}

/* The parameters' checks: all >= 1, every size within 64 bits, heads
 * dividing d_model (without head_dim), the shape's, then the sharding's. */
static bool transformer_check(const strata_params *p, strata_model_shape *s, wl_shard_plan *plan, GError **err)
{
    static const char *const positive[] = {"layers", "d_model", "heads", "seq", "batch", "vocab", NULL};
    static const char *const sizes[] = {"vocab*d_model",       "seq*d_model",        "4*d_model*d_model",
                                        "12*layers*d_model*d_model", "batch*seq*4*d_model", "batch*heads*seq*seq",
                                        "batch*seq*vocab",     NULL};
    static const char *const int32_sizes[] = {"batch*seq", NULL};
    static const char *const counts[] = {"layers", NULL};
    if (!strata_workload_check_positive(p, "transformer", positive, err) ||
        !strata_workload_check_counts(p, "transformer", counts, TRANSFORMER_MAX_LAYERS,
                                        "the graph is held while generating: 10000 layers take ~100 to 150 MB", err) ||
        !strata_workload_check_sizes(p, "transformer", sizes, strata_workload_dtype(p, "dtype"), err) ||
        !strata_workload_check_sizes(p, "transformer", int32_sizes, STRATA_DTYPE_INT32, err))
        return false;
    if (strata_params_is_set(p, "collective_matmul") &&
        (strata_params_int(p, "collective_matmul") < 0 || strata_params_int(p, "collective_matmul") > (1 << 30))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: expected collective_matmul a size in MiB from 0 to 2^30, got %" G_GINT64_FORMAT,
                    strata_params_int(p, "collective_matmul"));
        return false;
    }
    int64_t d = strata_params_int(p, "d_model"), H = strata_params_int(p, "heads");
    if (d % H != 0 && !strata_params_is_set(p, "head_dim")) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: expected heads to divide d_model, got d_model=%" G_GINT64_FORMAT
                    " heads=%" G_GINT64_FORMAT " (or give head_dim)", d, H);
        return false;
    }
    const char *remat = strata_params_string(p, "remat");
    if (!wl_remat_policy_find(remat)) {
        GString *known = g_string_new(NULL);
        for (guint i = 0; wl_remat_policy_at(i); i++)
            g_string_append_printf(known, "%s%s", i ? ", " : "", wl_remat_policy_at(i)->name);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "transformer: expected remat to be one of %s, got '%s'",
                    known->str, remat);
        g_string_free(known, TRUE);
        return false;
    }
    if (!remat_names_ok(p, remat, err) || !strata_model_shape_of(p, "transformer", s, err))
        return false;
    bool flash = strata_params_is_set(p, "attention") && g_str_equal(strata_params_string(p, "attention"), "flash"),
         causal = strata_params_is_set(p, "mask") && g_str_equal(strata_params_string(p, "mask"), "causal");
    if (s->sliding_window > 0 && flash && !causal) {
        g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "transformer: sliding_window is a causal window: expected mask=causal with "
                            "attention=flash");
        return false;
    }
    return shape_sizes_ok(s, p, err) && transformer_check_shard(p, s, plan, err);
}

/* Under tp, a node whose output (k < 0) or input k's gradient is a partial
 * sum over the model axis. */
void tf_partial(tf_ctx *c, const tf_dims *z, uint32_t node, int k)
{
    if (z->T <= 1)
        return;
    if (k < 0)
        wl_model_reduce_out(c->m, node, MODEL_AXIS);
    else
        wl_model_reduce_grad(c->m, node, (uint32_t)k, MODEL_AXIS);
}

/* The input of a column-parallel block: under sp x [B,S/T,d] all-gathered
 * over the model axis into NAME_ag [B,S,d] (whose gradient is then
 * reduce-scattered), else x itself. */
wl_tensor tf_block_in(tf_ctx *c, const tf_dims *z, wl_tensor x)
{
    if (!z->sp)
        return x;
    const uint64_t bsd[3] = {z->B, z->S, z->d};
    char *name = g_strconcat(wl_graph_name(c->g, x), "_ag", NULL);
    wl_tensor full = tf_act(c, name, 3, bsd);
    g_free(name);
    wl_model_all_gather(c->m, full, x, MODEL_AXIS);
    return full;
}

/* A column-parallel matmul out = x @ w of `flops`, on the block's input x:
 * the gradient of x is a partial sum over the model axis, all-reduced
 * under tp and reduce-scattered by x's all-gather under sp. */
uint32_t tf_column(tf_ctx *c, const tf_dims *z, const char *label, wl_tensor out, wl_tensor x, wl_tensor w,
                   double flops)
{
    uint32_t node = wl_model_matmul(c->m, label, out, x, w, flops);
    if (!z->sp)
        tf_partial(c, z, node, 0);
    return node;
}

/* The output of a row-parallel block: x [B,S,d], node's output, is a
 * partial sum over the model axis, all-reduced in place under tp (x is
 * returned), reduce-scattered into NAME_rs [B,S/T,d] under sp. */
wl_tensor tf_block_out(tf_ctx *c, const tf_dims *z, uint32_t node, wl_tensor x)
{
    if (!z->sp) {
        tf_partial(c, z, node, -1);
        return x;
    }
    const uint64_t bsd[3] = {z->B, z->S / z->T, z->d};
    char *name = g_strconcat(wl_graph_name(c->g, x), "_rs", NULL);
    wl_tensor part = tf_act(c, name, 3, bsd);
    g_free(name);
    wl_model_reduce_scatter(c->m, part, x, MODEL_AXIS);
    return part;
}

/* The head on the last layer's output h (group L): final layernorm, the
 * output projection (tied: the embedding) and the cross-entropy loss
 * against targets. */
static void tf_head(tf_ctx *c, const tf_dims *z, int group, wl_tensor h, wl_tensor embed, wl_tensor targets)
{
    wl_graph *g = c->g;
    wl_model *m = c->m;
    const uint64_t V = z->V / z->T, dvec[1] = {z->d}, bsd[3] = {z->B, z->sp ? z->S / z->T : z->S, z->d},
                   bsv[3] = {z->B, z->S, V}, vd[2] = {V, z->d};
    wl_model_group(m, group, false);
    wl_tensor lnf = tf_param(c, "lnf", 1, dvec);
    if (!z->s->tie)
        embed = tf_param(c, "unembed", 2, vd);
    wl_tensor hf = tf_act(c, "lnf_out", 3, bsd);
    tf_norm(c, z, "final_ln", hf, h, lnf);
    wl_tensor logits = tf_act(c, "logits", 3, bsv);
    tf_column(c, z, "logits_proj", logits, tf_block_in(c, z, hf), embed,
              2 * (double)(z->B * z->S * z->d) * (double)V);
    wl_tensor loss = wl_graph_tensor(g, "loss", STRATA_TAG_TEMP, STRATA_DTYPE_F32, 0, NULL, WL_TEMP);
    wl_tensor x_ins[2] = {logits, targets};
    double bsv_n = (double)(z->B * z->S * V);
    uint32_t xn = wl_model_node(m, "cross_entropy", loss, x_ins, 2, 5 * bsv_n, false);
    wl_model_vjp(m, xn, 0, 5 * bsv_n, x_ins, 2);
}

/* AdamW for parameter pt with gradient gp: m_P and v_P arguments (and the
 * master weights master_P with param_dtype), updated in place (donated)
 * into new_P, new_m_P and new_v_P (and new_master_P). */
static void tf_adamw(tf_ctx *c, wl_tensor pt, wl_tensor gp)
{
    wl_graph *g = c->g;
    const char *pn_ = wl_graph_name(g, pt);
    /* Copy the extents: wl_graph_tensor grows the tensor table, which moves them. */
    const uint64_t *pdims;
    uint32_t nd = wl_graph_dims(g, pt, &pdims);
    uint64_t dims[STRATA_MAX_DIMS];
    memcpy(dims, pdims, nd * sizeof dims[0]);
    if (c->sgd) { /* optax.sgd: P - lr g, no state (2 flops per element) */
        char *np = g_strconcat("new_", pn_, NULL), *lab = g_strconcat("sgd_", pn_, NULL);
        wl_tensor ins[2] = {pt, gp}, out = wl_graph_tensor(g, np, STRATA_TAG_PARAM, c->dt, nd, dims, WL_OUTPUT);
        wl_graph_compute(g, lab, 2.0 * (double)wl_graph_elements(g, pt), ins, 2, &out, 1, &pt, 1);
        g_free(np);
        g_free(lab);
        return;
    }
    static const char *const prefixes[] = {"m_", "v_", "master_"};
    int n = c->master != STRATA_DTYPE_NONE ? 3 : 2;
    wl_tensor ins[5] = {pt, gp}, outs[4], donated[4] = {pt};
    for (int i = 0; i < n; i++) {
        char *an = g_strconcat(prefixes[i], pn_, NULL);
        ins[2 + i] = donated[1 + i] = wl_graph_tensor(g, an, STRATA_TAG_OPTSTATE, i < 2 ? STRATA_DTYPE_F32 : c->master,
                                                      nd, dims, WL_ARGUMENT);
        g_free(an);
    }
    char *np = g_strconcat("new_", pn_, NULL);
    outs[0] = wl_graph_tensor(g, np, STRATA_TAG_PARAM, c->dt, nd, dims, WL_OUTPUT);
    g_free(np);
    for (int i = 0; i < n; i++) {
        char *on = g_strconcat("new_", prefixes[i], pn_, NULL);
        outs[1 + i] = wl_graph_tensor(g, on, STRATA_TAG_OPTSTATE, i < 2 ? STRATA_DTYPE_F32 : c->master, nd, dims,
                                      WL_OUTPUT);
        g_free(on);
    }
    char *lab = g_strconcat("adamw_", pn_, NULL);
    wl_graph_compute(g, lab, 18.0 * (double)wl_graph_elements(g, pt), ins, (uint32_t)(2 + n), outs, (uint32_t)(1 + n),
                     donated, (uint32_t)(1 + n));
    g_free(lab);
}

static const char *string_or_null(const strata_params *p, const char *name)
{
    return strata_params_is_set(p, name) ? strata_params_string(p, name) : NULL;
}

static bool transformer_check_only(const strata_params *p, GError **err)
{
    wl_shard_plan plan;
    strata_model_shape shape;
    return transformer_check(p, &shape, &plan, err);
}

/* The embedding gather h = embed[tokens] (+ pos, learned positions): group -1. */
static wl_tensor tf_embed(tf_ctx *c, const tf_dims *z, wl_tensor tokens, wl_tensor embed, wl_tensor pos)
{
    wl_model *m = c->m;
    const uint64_t bsd[3] = {z->B, z->S, z->d};
    double bsd_n = (double)(z->B * z->S * z->d);
    wl_model_group(m, -1, false);
    wl_tensor h = tf_act(c, "h_0", 3, bsd);
    wl_tensor e_ins[3] = {tokens, embed, pos};
    uint32_t en = wl_model_node(m, "embed_gather", h, e_ins, pos != WL_NONE ? 3 : 2, bsd_n, false);
    wl_model_vjp(m, en, 1, bsd_n, &tokens, 1); /* scatter-add into d_embed */
    if (pos != WL_NONE)
        wl_model_vjp(m, en, 2, bsd_n, NULL, 0);
    return tf_block_out(c, z, en, h); /* vocabulary-parallel: each device gathers its rows */
}

/* With a pipe axis: pipeline.h's step (remat none or full). */
static strata_source *transformer_pipeline(const strata_params *p, const strata_model_shape *shape,
                                           const wl_shard_plan *plan, const tf_dims *z, strata_dtype dt,
                                           strata_dtype master, const wl_remat_policy *policy, GError **err)
{
    if (!g_str_equal(policy->name, "none") && !g_str_equal(policy->name, "full")) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: with a pipe axis, expected remat=none or full, got remat=%s", policy->name);
        return NULL;
    }
    const char *fp8 = strata_params_is_set(p, "fp8") ? strata_params_string(p, "fp8") : "delayed";
    bool dist_opt = strata_params_is_set(p, "dist_opt") && g_str_equal(strata_params_string(p, "dist_opt"), "on");
    if (dist_opt && plan->e > 1) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: dist_opt=on with an expert axis is not modelled (expected dist_opt=off)");
        return NULL;
    }
    wl_pipe_step st = {(uint64_t)strata_params_int(p, "batch"), z->S, dt, master == dt ? STRATA_DTYPE_NONE : master,
                       z->flash, z->causal, g_str_equal(policy->name, "full"),
                       dt != STRATA_DTYPE_F8 || g_str_equal(fp8, "none") ? WL_FP8_NONE
                       : g_str_equal(fp8, "current")                    ? WL_FP8_CURRENT
                                                                        : WL_FP8_DELAYED,
                       dist_opt};
    return wl_pipeline_generate(shape, plan, &st, err);
}

static strata_source *transformer_generate(const strata_params *p, GError **err)
{
    wl_shard_plan plan;
    strata_model_shape shape;
    if (!transformer_check(p, &shape, &plan, err))
        return NULL;
    tf_dims z = {(uint64_t)strata_params_int(p, "batch") / plan.n, (uint64_t)strata_params_int(p, "seq"),
                 (uint64_t)strata_params_int(p, "d_model"), (uint64_t)strata_params_int(p, "heads"),
                 (uint64_t)strata_params_int(p, "vocab"), plan.t, plan.seq, &shape,
                 strata_params_is_set(p, "attention") && g_str_equal(strata_params_string(p, "attention"), "flash"),
                 strata_params_is_set(p, "mask") && g_str_equal(strata_params_string(p, "mask"), "causal"),
                 1, 1, NULL, false};
    uint64_t L = (uint64_t)strata_params_int(p, "layers");
    const wl_remat_policy *policy = wl_remat_policy_find(strata_params_string(p, "remat"));
    wl_remat remat = policy->kind;
    strata_dtype dt = strata_workload_dtype(p, "dtype");
    strata_dtype master = strata_params_is_set(p, "param_dtype") ? strata_workload_dtype(p, "param_dtype") : dt;
    if (plan.p > 1)
        return transformer_pipeline(p, &shape, &plan, &z, dt, master, policy, err);
    tf_ctx c = {wl_graph_new(), NULL, dt, master == dt ? STRATA_DTYPE_NONE : master,
                g_array_new(FALSE, FALSE, sizeof(wl_tensor)),
                strata_params_is_set(p, "optimizer") && g_str_equal(strata_params_string(p, "optimizer"), "sgd")};
    c.m = wl_model_new(c.g);
    if (g_str_equal(policy->name, "save_and_offload_only_these_names"))
        wl_model_remat_names(c.m, string_or_null(p, "remat_save"), string_or_null(p, "remat_offload"));
    else
        wl_model_remat_names(c.m, policy->save, policy->offload);
    wl_graph *g = c.g;
    wl_model *m = c.m;
    wl_moe_rows rows;
    if (!tf_axes_setup(p, &plan, &z, g, &rows, err)) {
        wl_model_free(m);
        wl_graph_free(g);
        g_array_free(c.params, TRUE);
        return NULL;
    }
    if (plan.data == WL_DATA_NONE && (plan.e > 1 || plan.c > 1))
        plan.data = WL_DATA_DP; /* the expert and context axes split the tokens: gradients are reduced over them */

    const uint64_t bs[2] = {z.B, z.S}, vd[2] = {z.V / z.T, z.d}, sd[2] = {z.S * z.CP, z.d};
    wl_tensor tokens = wl_graph_tensor(g, "tokens", STRATA_TAG_INPUT, STRATA_DTYPE_INT32, 2, bs, WL_ARGUMENT);
    wl_tensor targets = wl_graph_tensor(g, "targets", STRATA_TAG_INPUT, STRATA_DTYPE_INT32, 2, bs, WL_ARGUMENT);
    wl_tensor embed = tf_param(&c, "embed", 2, vd);
    wl_tensor pos = shape.rope ? WL_NONE : tf_param(&c, "pos", 2, sd);
    wl_tensor h = tf_embed(&c, &z, tokens, embed, pos);
    for (uint64_t l = 0; l < L; l++)
        h = tf_layer(&c, &z, l, h);
    tf_head(&c, &z, (int)L, h, embed, targets);
    wl_shard *sh = wl_shard_new(g, m, &plan, c.params, remat);
    tf_axes_experts(g, sh, c.params);
    wl_model_emit(m, remat, WL_TEMP);

    for (guint i = 0; i < c.params->len; i++) {
        wl_tensor pt = g_array_index(c.params, wl_tensor, i);
        wl_tensor gp = wl_shard_grad(sh, pt);
        if (gp != WL_NONE)
            tf_adamw(&c, wl_shard_param(sh, pt), gp);
    }
    wl_shard_free(sh);
    g_free(rows.group_rows);
    wl_model_free(m);
    g_array_free(c.params, TRUE);
    if (strata_params_is_set(p, "collective_matmul") && z.T > 1) {
        uint64_t mib = (uint64_t)strata_params_int(p, "collective_matmul");
        wl_graph *w = wl_collective_matmul(g, TF_MODEL_AXIS, (uint32_t)z.T, mib << 20, NULL);
        wl_graph_free(g);
        g = w;
    }
    return wl_graph_to_source(g, "transformer", err);
}

const strata_workload_type strata_workload_transformer = {
    "transformer",
    "a decoder training step: embeddings, attention, MLP, layernorm, AdamW; remat none|full|dots; sharded "
    "over mesh= by sharding=dp|fsdp|tp|tp+sp|fsdp+tp|fsdp+tp+sp",
    transformer_params,
    transformer_generate,
    NULL,
    transformer_check_only,
};
