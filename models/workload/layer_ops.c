/*
 * layer_ops.c: one decoder layer's kernels on one device (contract in
 * layer_ops.h), as Megatron-LM's TransformerLayer with Transformer
 * Engine's modules runs them (NVIDIA/Megatron-LM@d98e8a64:
 * megatron/core/transformer/transformer_layer.py _forward_attention and
 * _forward_mlp; attention.py linear_qkv, apply_rotary_pos_emb,
 * core_attention, linear_proj; mlp.py linear_fc1, bias_swiglu_impl,
 * linear_fc2).
 *
 * Per device (T = b s tokens, t the tensor axis; Tn = T / t the tokens a
 * norm or residual add sees under sequence parallelism, T without; d =
 * d_model, H = heads / t, K = kv_heads / t, hd = head_dim, F = ffn / t):
 *   norm1      elementwise Tn d (RMSNorm 4 vector ops an element, 8 back;
 *              LayerNorm 8, 14 back: transformer_layer.c's counts)
 *   qkv        gemm T x d x (H + 2K) hd (column-parallel; under sp its
 *              input all-gathered first)
 *   qk_norm    elementwise T (H + K) hd, as norm1 (qk_norm only)
 *   rope       elementwise T (H + K) hd, 3 an element each way (pos=rope)
 *   attn       flash-attention b x H x s x s x hd [x K] mask=causal (or
 *              window-W on a local layer), backward flash-attention-bwd
 *              of the same dims; without flash attention the unfused form:
 *              batched gemms q k^T (b H x s x hd x s) and p v (b H x s x
 *              s x hd) around a softmax (5 an element, 4 back) of the
 *              whole b H s s matrix (Megatron's FusedScaleMaskSoftmax
 *              masks it, it does not skip it), in the activations' dtype
 *   o          gemm T x H hd x d (row-parallel; tensor parallelism's
 *              all-reduce or reduce-scatter follows)
 *   res1       elementwise Tn d, 1 an element (the residual add; back, the
 *              gradient's accumulation where the stream splits)
 *   norm2      as norm1
 *   up         gemm T x d x 2F gated (gate and up in one, Megatron's fc1
 *              of stride 2), T x d x F otherwise
 *   act        elementwise T F: gated act(gate) x up 6 an element, 16
 *              back; gelu 12, 20 back; relu 1, 1
 *   down       gemm T x F x d (row-parallel; the collective follows)
 *   res2       as res1; post_norms adds a norm before each residual add.
 * MoE layers (strata_model_layer_is_moe): router gemm Tn x d x E and its
 * softmax and top-k (elementwise Tn E, 5 a logit each way), the tokens
 * permuted to their experts (elementwise T k d), the experts' up and down
 * projections each one grouped gemm over the T k routed rows (TE's
 * GroupedLinear: balanced, no row dropped), the activation on T k F_moe /
 * t, the combine (elementwise T k d, 2 an element), and the shared
 * experts a dense MLP of shared x F_moe beside them; under an expert axis
 * of ep devices the routed rows go to their experts' devices by an
 * all-to-all of T k d elements after the permutation and come back by
 * another before the combine (balanced: each device's E / ep experts
 * receive T k rows in all, so the grouped gemms keep their dims).
 * MLA (kv_lora_rank > 0, tensor axis 1): q_a, q_b (or q), kv_a, kv_b
 * gemms with their norms, rope on the rope part, the flash kernel's head
 * width the mean of q/k's and v's (so its flops are the two products'
 * exactly).
 * The head: the final norm, gemm T x d x V / t (in the activations'
 * dtype: Megatron's output layer is tensor_parallel.ColumnParallelLinear,
 * not a TE module, so bf16 under f8; gpt_model.py:273-277, FP8 only for
 * MXFP8 with fp8_output_proj), and the cross entropy on
 * the T V / t logits (5 an element, 2 back; ESTIMATE: max, exp, sum,
 * divide; it reads the logits and keeps f32 probabilities, Megatron's
 * VocabParallelCrossEntropy saves exp_logits).
 *
 * Bytes of an elementwise op: its operands read and written once (a norm
 * 2 N, back 3 N; an add 3 N; gated act 3 T F, back 5 T F; rope 2 N each
 * way) in the activations' dtype: the step's, but bf16 under f8, where
 * Transformer Engine runs only the GEMMs in FP8 (its norms, rotary,
 * activation and residuals are bf16); flash attention likewise runs in
 * bf16 (Megatron's fp8_dot_product_attention defaults to False,
 * transformer_config.py:640).
 *
 * FP8 (dtype f8, geom fp8 delayed or current): te_casts adds Transformer
 * Engine's cast, transpose and amax kernels around each TE Linear (not the
 * head, the unfused attention's products or the MoE router, which are no
 * TE modules), as elementwise ops with their bytes (see te_casts). Not
 * modelled: the delayed recipe's amax-history update and its amax
 * all-reduce once a forward (a few small kernels and a small collective
 * a microbatch), the norms' FP8 output (counted as bf16).
 *
 * model_flops: a gemm 2 M K N (the router's and, without sp, the MoE
 * layer's share / t: the model's count is even over the tensor group); the
 * attention the model's own count / t (strata_model_step_flops: 2 b H
 * (dqk + dv) x S^2 / 2 causal, (S W - W^2 / 2) on a local layer, S^2
 * without a mask), its backward twice that; elementwise none. The flash
 * backward's kernel count is 2.5 times the forward's
 * (FlashAttention-2's five products: S is computed again), so the kernels'
 * flops exceed model_flops by half an attention forward, and by the
 * elementwise vector ops.
 */
#include "workload/layer_ops.h"
#include <string.h>
#include "kernel/kernel.h"
#include "workload/graph.h"

struct wl_layer_ops {
    GArray *ops; /* wl_layer_op */
};

/* A list under construction: the forward ops in order, and each forward
 * op's backward as a group, appended in reverse at the end. */
typedef struct lb {
    const strata_model_shape *s;
    const wl_layer_geom *g;
    GArray *fwd, *back;
    GArray *groups; /* uint32_t: where each forward op's backward starts in back */
    strata_dtype gd, ad; /* the gemms' dtype; the activations' */
    double ae;       /* its bytes */
    uint64_t T, Tn;
    bool ln_in;      /* the next gemm is a TE LayerNormLinear's: its norm writes the FP8 input */
    bool no_te;      /* the next gemm is no TE module (the MoE router): no casts */
} lb;

static wl_layer_op op_of(char pass, const char *name, const char *kernel, strata_dtype dt, double model)
{
    return (wl_layer_op){.pass = pass, .name = name, .kernel = kernel, .dtype = dt, .model_flops = model};
}

static void group(lb *b)
{
    uint32_t at = b->back->len;
    g_array_append_val(b->groups, at);
}

/* Where tensor parallelism's collective sits around a gemm: none; after
 * a column-parallel one's input gradient; after a row-parallel one's
 * forward. */
typedef enum { TP_NONE, TP_COLUMN, TP_ROW } tp_kind;

/* Y[M,N] = X[M,K] W[K,N]; names: forward, input and weight gradient.
 * weights: W is a parameter (its gradient the W pass), else an activation
 * (both gradients in B). share: model_flops' fraction of the kernels'. */
/* An elementwise cast of n elements, bytes a element, appended to list. */
static void cast(lb *b, GArray *list, char pass, const char *name, uint64_t n, double bytes)
{
    wl_layer_op o = op_of(pass, name, "elementwise", b->ad, 0);
    o.n_dims = 1;
    o.dims[0] = n;
    o.flops = 2.0 * (double)n; /* ESTIMATE: an abs-max and a scaled convert an element */
    o.bytes = (uint64_t)(bytes * (double)n);
    g_array_append_val(list, o);
}

/* Transformer Engine's casts around an FP8 Linear Y[M,N] = X[M,K] W[K,N]
 * (TE v1.8 = 3ec998e9, in the NeMo 24.07 container; v2.7 = fedd9ddc, in
 * the NeMo 25.09 one). Forward: X read in bf16, written in FP8 with its
 * transpose by fp8_cast_transpose_fused (v1.8 module/linear.py:129),
 * only cast under sequence parallelism (linear.py:137, before the
 * all-gather) and then transposed in the backward (linear.py:531); a
 * LayerNormLinear's norm writes X in FP8 itself under delayed scaling
 * (layernorm_linear.py, v2.7 :193 with_quantized_norm), its transpose made
 * in the backward (v1.8 layernorm_linear.py:584 fp8_transpose); under
 * current scaling the norm writes bf16 and its amax, then X is cast as a
 * Linear's input is, without the amax pass (v2.7 pytorch/csrc/extensions/
 * normalization.cpp:97-150: force_unfused_kernel, quantize_with_amax).
 * Backward: dY cast with its
 * transpose (grad_output_preprocess). Weights: cast with their transpose
 * when is_first_microbatch (v1.8 linear.py:997 update_workspace): once a
 * step (Megatron's TELinear passes False after the first,
 * NVIDIA/Megatron-LM@d98e8a64 megatron/core/extensions/
 * transformer_engine.py:1338-1345). Current scaling reads each input once
 * more for its amax first. Under sequence parallelism a column-parallel
 * input and a row-parallel dY are cast on their Tn rows, before the
 * gather. The casts' dims name the elements; dX, dW stay in the list's
 * backward groups: here the op lists are the forward and the backward
 * group the gemm opened. */
static void te_casts(lb *b, const char *const *names, uint64_t M, uint64_t K, uint64_t N, tp_kind tp, GArray *fwd,
                     GArray *bwd_b, GArray *bwd_w)
{
    bool sp = b->g->sp && b->g->t > 1, cur = b->g->fp8 == WL_FP8_CURRENT;
    double amax = cur ? b->ae : 0;
    uint64_t in_rows = tp == TP_COLUMN && sp ? b->Tn : M, dy_rows = tp == TP_ROW && sp ? b->Tn : M;
    if (fwd) { /* the weight, once a step (pass S), then the input */
        cast(b, fwd, 'S', names[3], K * N, b->ae + 2 + amax);
        if (!b->ln_in) /* a Linear's input: its amax pass (current), the cast */
            cast(b, fwd, 'F', names[4], in_rows * K, b->ae + (sp ? 1 : 2) + amax);
        else if (cur) /* current scaling: the norm writes bf16 and its amax, then the cast */
            cast(b, fwd, 'F', names[4], in_rows * K, b->ae + (sp ? 1 : 2));
    } else if (bwd_b)
        cast(b, bwd_b, 'B', names[5], dy_rows * N, b->ae + 2 + amax);
    else if ((b->ln_in && !cur) || sp) /* else the forward's cast wrote the transpose */
        cast(b, bwd_w, 'W', names[6], M * K, 2);
}

static void gemm(lb *b, const char *const *names, uint64_t Bt, uint64_t M, uint64_t K, uint64_t N, bool weights,
                 tp_kind tp, double share)
{
    const uint64_t d[3][3] = {{M, K, N}, {M, N, K}, {K, M, N}};
    double f = 2.0 * (double)Bt * (double)M * (double)K * (double)N * share;
    bool te = weights && b->gd == STRATA_DTYPE_F8 && b->g->fp8 != WL_FP8_NONE && Bt == 1 && !b->no_te;
    group(b);
    if (te)
        te_casts(b, names, M, K, N, tp, b->fwd, NULL, NULL);
    for (int i = 0; i < 3; i++) {
        if (te && i > 0)
            te_casts(b, names, M, K, N, tp, NULL, i == 1 ? b->back : NULL, b->back);
        wl_layer_op o = op_of(i == 0 ? 'F' : i == 1 || !weights ? 'B' : 'W', names[i], "gemm", b->gd, f);
        o.n_dims = wl_gemm_dims(o.dims, Bt, d[i][0], d[i][1], d[i][2]);
        o.tp_after = (tp == TP_ROW && i == 0) || (tp == TP_COLUMN && i == 1);
        g_array_append_val(i == 0 ? b->fwd : b->back, o);
    }
    b->ln_in = b->no_te = false;
}

/* An elementwise op of n elements: vector ops and operand elements per
 * element, forward and back (back 0: none). */
static void elementwise(lb *b, const char *name, const char *back, uint64_t n, double f_ops, double f_elems,
                        double b_ops, double b_elems)
{
    wl_layer_op o = op_of('F', name, "elementwise", b->ad, 0);
    o.n_dims = 1;
    o.dims[0] = n;
    o.flops = f_ops * (double)n;
    o.bytes = (uint64_t)(f_elems * (double)n * b->ae);
    g_array_append_val(b->fwd, o);
    group(b);
    if (b_ops <= 0)
        return;
    o.pass = 'B';
    o.name = back;
    o.flops = b_ops * (double)n;
    o.bytes = (uint64_t)(b_elems * (double)n * b->ae);
    g_array_append_val(b->back, o);
}

static void norm(lb *b, const char *name, const char *back, uint64_t n)
{
    bool rms = b->s->rmsnorm;
    elementwise(b, name, back, n, rms ? 4 : 8, 2, rms ? 8 : 14, 3);
}

static void residual(lb *b, const char *name, const char *back)
{
    elementwise(b, name, back, b->Tn * (uint64_t)b->s->d_model, 1, 3, 1, 3);
}

/* The model's attention flops for layer l on this device (see the header). */
static double attention_model(const lb *b, int64_t l, double dqk, double dv)
{
    double S = (double)b->g->s, W = (double)strata_model_layer_window(b->s, l);
    double per_key = 2.0 * (double)b->g->b * (double)((uint64_t)b->s->heads / b->g->t) * (dqk + dv);
    if (!b->g->causal)
        return per_key * S * S;
    return W > 0 && W < S ? per_key * (S * W - W * W / 2) : per_key * S * S / 2;
}

static void attention(lb *b, int64_t l, uint64_t dqk, uint64_t dv, uint64_t kv)
{
    uint64_t B = b->g->b, S = b->g->s, H = (uint64_t)b->s->heads / b->g->t;
    double model = attention_model(b, l, (double)dqk, (double)dv);
    if (!b->g->flash) {
        static const char *const qk[3] = {"qk", "qk.dq", "qk.dk"}, *const pv[3] = {"pv", "pv.dp", "pv.dv"};
        double whole = 2.0 * (double)(B * H) * (double)S * (double)S * (double)(dqk + dv);
        strata_dtype keep = b->gd;
        b->gd = b->ad; /* no TE Linear: bf16 under f8 */
        gemm(b, qk, B * H, S, dqk, S, false, TP_NONE, model / whole);
        elementwise(b, "softmax", "softmax.bwd", B * H * S * S, 5, 2, 4, 3);
        gemm(b, pv, B * H, S, S, dv, false, TP_NONE, model / whole);
        b->gd = keep;
        return;
    }
    uint64_t dm = (dqk + dv) / 2;
    int64_t w = strata_model_layer_window(b->s, l);
    wl_layer_op o = op_of('F', "attn", "flash-attention", b->ad, model);
    const uint64_t dims[6] = {B, H, S, S, dm, kv};
    o.n_dims = kv == H ? 5 : 6;
    memcpy(o.dims, dims, sizeof dims);
    if (b->g->causal && w > 0 && (uint64_t)w < S)
        g_snprintf(o.mask, sizeof o.mask, "window-%" G_GINT64_FORMAT, w);
    else if (b->g->causal)
        g_strlcpy(o.mask, "causal", sizeof o.mask);
    g_array_append_val(b->fwd, o);
    group(b);
    o.pass = 'B';
    o.name = "attn.bwd";
    o.kernel = "flash-attention-bwd";
    o.model_flops = 2 * model;
    g_array_append_val(b->back, o);
}

/* A gemm's names: forward, input and weight gradient, then its TE casts
 * (te_casts: weight, input, output gradient, input transpose). */
#define NAMES(x) ((const char *const[7]){x, x ".dx", x ".dw", x ".w_cast", x ".x_cast", x ".dy_cast", x ".x_t"})

/* The attention block from norm1 to the residual add. */
static void attention_block(lb *b, int64_t l)
{
    const strata_model_shape *s = b->s;
    uint64_t T = b->T, d = (uint64_t)s->d_model, t = b->g->t, H = (uint64_t)s->heads / t;
    norm(b, "norm1", "norm1.bwd", b->Tn * d);
    uint64_t dqk = (uint64_t)s->head_dim, dv = dqk, kv = (uint64_t)s->kv_heads / t;
    if (s->kv_lora_rank > 0) { /* MLA (t = 1) */
        uint64_t ql = (uint64_t)s->q_lora_rank, kvl = (uint64_t)s->kv_lora_rank, rope = (uint64_t)s->qk_rope_head_dim;
        dqk = (uint64_t)(s->qk_nope_head_dim + s->qk_rope_head_dim);
        dv = (uint64_t)s->v_head_dim;
        kv = H;
        if (ql > 0) {
            gemm(b, NAMES("q_a"), 1, T, d, ql, true, TP_NONE, 1);
            norm(b, "q_norm", "q_norm.bwd", T * ql);
            gemm(b, NAMES("q_b"), 1, T, ql, H * dqk, true, TP_NONE, 1);
        } else
            gemm(b, NAMES("q"), 1, T, d, H * dqk, true, TP_NONE, 1);
        gemm(b, NAMES("kv_a"), 1, T, d, kvl + rope, true, TP_NONE, 1);
        norm(b, "kv_norm", "kv_norm.bwd", T * kvl);
        gemm(b, NAMES("kv_b"), 1, T, kvl, H * (dqk - rope + dv), true, TP_NONE, 1);
        if (s->rope && rope > 0)
            elementwise(b, "rope", "rope.bwd", T * (H + 1) * rope, 3, 2, 3, 2);
    } else {
        b->ln_in = true; /* Megatron's TELayerNormColumnParallelLinear */
        gemm(b, NAMES("qkv"), 1, T, d, (H + 2 * kv) * dqk, true, TP_COLUMN, 1);
        if (s->qk_norm)
            norm(b, "qk_norm", "qk_norm.bwd", T * (H + kv) * dqk);
        if (s->rope)
            elementwise(b, "rope", "rope.bwd", T * (H + kv) * dqk, 3, 2, 3, 2);
    }
    attention(b, l, dqk, dv, kv);
    gemm(b, NAMES("o"), 1, T, H * dv, d, true, TP_ROW, 1);
    if (s->post_norms)
        norm(b, "post_norm1", "post_norm1.bwd", b->Tn * d);
    residual(b, "res1", "res1.bwd");
}

/* act on n elements. */
static void activation(lb *b, const char *name, const char *back, uint64_t n)
{
    bool relu = b->s->mlp == STRATA_MLP_RELU;
    if (b->s->gated)
        elementwise(b, name, back, n, 6, 3, 16, 5);
    else
        elementwise(b, name, back, n, relu ? 1 : 12, 2, relu ? 1 : 20, 3);
}

/* A dense MLP of rows tokens and hidden width F (per device). */
static void dense_mlp(lb *b, const char *const *up, const char *act, const char *act_back,
                      const char *const *down, uint64_t rows, uint64_t F, bool tp)
{
    uint64_t d = (uint64_t)b->s->d_model;
    gemm(b, up, 1, rows, d, (b->s->gated ? 2 : 1) * F, true, tp ? TP_COLUMN : TP_NONE, 1);
    activation(b, act, act_back, rows * F);
    gemm(b, down, 1, rows, F, d, true, tp ? TP_ROW : TP_NONE, 1);
}

/* An all-to-all over `expert` of the routed rows, and its backward. */
static void all_to_all(lb *b, const char *name, const char *back, uint64_t elements)
{
    if (b->g->ep <= 1)
        return;
    wl_layer_op o = op_of('F', name, NULL, b->ad, 0);
    o.all_to_all = true;
    o.bytes = (uint64_t)((double)elements * b->ae);
    g_array_append_val(b->fwd, o);
    group(b);
    o.pass = 'B';
    o.name = back;
    g_array_append_val(b->back, o);
}

static void moe_mlp(lb *b)
{
    const strata_model_shape *s = b->s;
    uint64_t d = (uint64_t)s->d_model, E = (uint64_t)s->experts, k = (uint64_t)s->top_k, t = b->g->t;
    uint64_t routed = b->T * k, F = (uint64_t)s->moe_ffn / t;
    double even = (double)b->T / (double)t / (double)b->Tn; /* the model's share of the router's work */
    b->no_te = true; /* Megatron's TopKRouter is a torch linear, not a TE module */
    gemm(b, NAMES("router"), 1, b->Tn, d, E, true, TP_NONE, even);
    elementwise(b, "topk", "topk.bwd", b->Tn * E, 5, 2, 5, 2);
    elementwise(b, "permute", "permute.bwd", routed * d, 1, 2, 1, 2);
    all_to_all(b, "dispatch", "dispatch.bwd", routed * d);
    dense_mlp(b, NAMES("experts_up"), "experts_act", "experts_act.bwd", NAMES("experts_down"), routed, F, true);
    all_to_all(b, "undispatch", "undispatch.bwd", routed * d);
    elementwise(b, "combine", "combine.bwd", routed * d, 2, 2, 2, 3);
    if (s->shared_experts > 0)
        dense_mlp(b, NAMES("shared_up"), "shared_act", "shared_act.bwd", NAMES("shared_down"), b->T,
                  (uint64_t)s->shared_experts * F, false);
}

static void lb_init(lb *b, const strata_model_shape *s, const wl_layer_geom *g)
{
    *b = (lb){s, g, g_array_new(FALSE, FALSE, sizeof(wl_layer_op)), g_array_new(FALSE, FALSE, sizeof(wl_layer_op)),
              g_array_new(FALSE, FALSE, sizeof(uint32_t)), g->dt,
              g->dt == STRATA_DTYPE_F8 ? STRATA_DTYPE_BF16 : g->dt, 0, g->b * g->s, 0, false, false};
    unsigned bits = strata_dtype_bits(b->ad);
    b->ae = bits ? bits / 8.0 : 2.0;
    b->Tn = g->sp && g->t > 1 ? b->T / g->t : b->T;
}

/* The forward ops, then each group of back in reverse. */
static wl_layer_ops *lb_finish(lb *b)
{
    wl_layer_ops *o = g_new0(wl_layer_ops, 1);
    o->ops = b->fwd;
    for (guint i = b->groups->len; i-- > 0;) {
        uint32_t from = g_array_index(b->groups, uint32_t, i);
        uint32_t to = i + 1 < b->groups->len ? g_array_index(b->groups, uint32_t, i + 1) : b->back->len;
        if (to > from)
            g_array_append_vals(o->ops, &g_array_index(b->back, wl_layer_op, from), to - from);
    }
    g_array_free(b->back, TRUE);
    g_array_free(b->groups, TRUE);
    return o;
}

wl_layer_ops *wl_layer_ops_new(const strata_model_shape *s, const wl_layer_geom *g, int64_t l)
{
    lb b;
    lb_init(&b, s, g);
    uint64_t d = (uint64_t)s->d_model;
    attention_block(&b, l);
    norm(&b, "norm2", "norm2.bwd", b.Tn * d);
    if (strata_model_layer_is_moe(s, l))
        moe_mlp(&b);
    else {
        b.ln_in = true; /* linear_fc1 is a TELayerNormColumnParallelLinear */
        dense_mlp(&b, NAMES("up"), "act", "act.bwd", NAMES("down"), b.T, (uint64_t)s->ffn / g->t, true);
    }
    if (s->post_norms)
        norm(&b, "post_norm2", "post_norm2.bwd", b.Tn * d);
    residual(&b, "res2", "res2.bwd");
    return lb_finish(&b);
}

wl_layer_ops *wl_layer_ops_new_head(const strata_model_shape *s, const wl_layer_geom *g)
{
    lb b;
    lb_init(&b, s, g);
    uint64_t d = (uint64_t)s->d_model, V = (uint64_t)s->vocab / g->t;
    b.gd = b.ad; /* Megatron's output layer is its own ColumnParallelLinear, outside TE's FP8 */
    norm(&b, "final_norm", "final_norm.bwd", b.Tn * d);
    gemm(&b, NAMES("head"), 1, b.T, d, V, true, TP_NONE, 1);
    /* the cross entropy: it reads the logits and writes f32 probabilities;
     * back it reads those and writes the gradient */
    double f32 = 4.0 / b.ae;
    elementwise(&b, "xent", "xent.bwd", b.T * V, 5, 1 + f32, 2, 1 + f32);
    return lb_finish(&b);
}

wl_layer_ops *wl_layer_ops_new_embed(const strata_model_shape *s, const wl_layer_geom *g)
{
    lb b;
    lb_init(&b, s, g);
    uint64_t n = b.T * (uint64_t)s->d_model;
    /* Megatron's VocabParallelEmbedding (megatron/core/tensor_parallel/
     * layers.py): each device gathers the rows of its vocabulary slice
     * (reads a row, writes it: 2 an element, 1 vector op for the mask),
     * the partial sums all-reduced over the tensor group (reduce-scattered
     * under sequence parallelism: the same volume, as run_ops writes it);
     * back, the gradient read and added into the f32 main_grad rows
     * (ESTIMATE: 1 + 2 x 2 activation-sized element reads and writes). */
    elementwise(&b, "embed", NULL, n, 1, 2, 0, 0);
    wl_layer_op *f = &g_array_index(b.fwd, wl_layer_op, b.fwd->len - 1);
    f->tp_after = g->t > 1;
    wl_layer_op w = *f;
    w.pass = 'W';
    w.name = "embed.dw";
    w.tp_after = false;
    w.bytes = (uint64_t)(5.0 * (double)n * b.ae);
    g_array_append_val(b.back, w);
    return lb_finish(&b);
}

void wl_layer_ops_free(wl_layer_ops *o)
{
    if (!o)
        return;
    g_array_free(o->ops, TRUE);
    g_free(o);
}

uint32_t wl_layer_ops_len(const wl_layer_ops *o)
{
    return o->ops->len;
}

const wl_layer_op *wl_layer_ops_at(const wl_layer_ops *o, uint32_t i)
{
    return &g_array_index(o->ops, wl_layer_op, i);
}

void wl_layer_ops_flops(const wl_layer_ops *o, char pass, double *kernel, double *model)
{
    *kernel = *model = 0;
    for (guint i = 0; i < o->ops->len; i++) {
        const wl_layer_op *x = wl_layer_ops_at(o, i);
        if ((pass && x->pass != pass) || x->all_to_all)
            continue;
        *model += x->model_flops;
        if (x->flops > 0) {
            *kernel += x->flops;
            continue;
        }
        strata_kernel_problem p = {.n_dims = x->n_dims, .dims = x->dims, .dtype = x->dtype};
        if (*x->mask)
            strata_kernel_mask_parse(x->mask, &p.causal, &p.window);
        double f = 0, bytes = 0;
        strata_kernel_find(x->kernel)->nominal(&p, &f, &bytes);
        *kernel += f;
    }
}
