/*
 * transformer_layer.c: one decoder layer of `strata gen transformer`
 * (transformer.h), for the shapes of model_config.h.
 *
 * Per layer l, on h (B=batch, S=seq, d=d_model, H heads of hd, K key/value
 * heads, F=ffn; per device under tp: H/T, K/T, F/T):
 *   a = norm(h; ln1)                     layernorm 8 flops/element (14 back),
 *                                        RMSNorm 4 (8 back)
 *   attention (GQA; MHA when K = H):
 *     qkv = a @ wqkv [d,(H+2K)hd]        (+ qkv_b with qkv_bias)
 *     qk_norm: RMSNorm of each q and k head (one [2,hd] scale)
 *     rope: q and k rotated, 3 flops/element of qkv each way
 *     full:  scores = q k^T [B,H,S,S], softmax, ctx = probs v (each product
 *            2 B S^2 H hd; XLA's masked form computes the whole matrix
 *            whether causal or not);
 *     flash: ctx = one kernel=flash-attention (dims BxHxSxSxhd[xK],
 *            mask=causal) of 4 B H S^2 hd flops, half with the causal
 *            mask, and its gradient one kernel=flash-attention-bwd of 2.5
 *            times that (FlashAttention-2's five products per block pair,
 *            benchmarks/benchmark_flash_attention.py's count); the score
 *            matrix is never stored (its per-row logsumexp, B H S f32, is
 *            left out); a local layer (sliding_window W < S) runs it with
 *            mask=window-W, 4 B H hd (S W - W^2 / 2) flops (the kernel
 *            row's nominal count; the full form computes the whole matrix
 *            whatever the window);
 *     MLA (kv_lora_rank > 0, DeepSeek-V3): q = norm(a @ wq_a) @ wq_b (or
 *            a @ wq), kv = norm(a @ wkv_a) @ wkv_b; q and k heads nope+rope
 *            wide, v heads v_head_dim; the flash kernel's head width is
 *            their mean (so its flops are the two products' exactly);
 *            one device or data meshes only.
 *     ctx @ wo [H hd, d]; (post_norms: norm); h1 = h + o
 *   b = norm(h1; ln2)
 *   MLP: gelu/relu: w1 [d,F], act, w2 [F,d]; swiglu/geglu: w1 (gate) and
 *        w3 (up) [d,F], act(gate) * up (6 flops/element, 10 and 6 back),
 *        w2 [F,d];
 *        MoE (strata_model_layer_is_moe): router r = b @ wr [d,E] and its
 *        top-k (5 flops per logit each way); b dispatched to the experts
 *        as xe [E,C,d] with C = ceil(B S k / E) (balanced, no token
 *        dropped); each expert's gated MLP on its C rows (we1, we3
 *        [E,d,F_moe], we2 [E,F_moe,d]); ye combined back into [B,S,d]
 *        weighted by the router (2 flops per routed element); shared
 *        experts a dense gated MLP of shared x F_moe beside it.
 *   (post_norms: norm); h' = h1 + f.
 * Under tp the q/k/v, gate and up matrices are column-parallel, wo and the
 * down matrices row-parallel (the router replicated); under sp the block
 * inputs are gathered and outputs reduce-scattered (transformer.c).
 * Kernels: every product is a kernel=gemm of its device's extents
 * (autodiff_nodes.h), its gradients two of their own: the projections and
 * the router M = B S rows; scores (B H/T) x S x hd x S and ctx (B H/T) x S
 * x S x hd batched; the experts batched over the device's experts, E x C
 * x d x F (with an expert axis or a capacity: El experts of rows/El rows
 * each, when that divides). On the roofline: the biased q/k/v projection's
 * forward (flops + the bias), the scores' gradient (dq and dk in one
 * step), the experts under an imbalanced load (work per device).
 */
#include "workload/transformer.h"
#include "kernel/kernel.h"

/* The layer's parameters as the compute reads them (WL_NONE: absent). */
typedef struct tf_layer_w {
    wl_tensor ln1, wqkv, qkv_b, qk_norm, wq_a, q_norm, wq_b, wkv_a, kv_norm, wkv_b, wo, ln1_post;
    wl_tensor ln2, w1, w3, w2, ln2_post, router, we1, we3, we2, ws1, ws3, ws2;
} tf_layer_w;

#define NAME(fmt) (g_snprintf(name, sizeof name, fmt, (unsigned)l), name)

/* The attention's parameters, in the order the trace declares them. */
static void attention_params(tf_ctx *c, const tf_dims *z, uint64_t l, tf_layer_w *w)
{
    const strata_model_shape *s = z->s;
    const uint64_t d = z->d, T = z->T, hd = (uint64_t)s->head_dim, Hl = z->H / T,
                   Kl = (uint64_t)s->kv_heads / T;
    char name[64];
    if (s->kv_lora_rank > 0) {
        const uint64_t ql = (uint64_t)s->q_lora_rank, kvl = (uint64_t)s->kv_lora_rank,
                       qk = (uint64_t)(s->qk_nope_head_dim + s->qk_rope_head_dim), rope = (uint64_t)s->qk_rope_head_dim;
        const uint64_t wqa[2] = {d, ql}, qn[1] = {ql}, wqb[2] = {ql, Hl * qk}, wq[2] = {d, Hl * qk},
                       wkva[2] = {d, kvl + rope}, kvn[1] = {kvl},
                       wkvb[2] = {kvl, Hl * (uint64_t)(s->qk_nope_head_dim + s->v_head_dim)};
        if (ql > 0) {
            w->wq_a = tf_param(c, NAME("l%u_wq_a"), 2, wqa);
            w->q_norm = tf_param(c, NAME("l%u_q_norm"), 1, qn);
            w->wq_b = tf_param(c, NAME("l%u_wq_b"), 2, wqb);
        } else
            w->wq_b = tf_param(c, NAME("l%u_wq"), 2, wq);
        w->wkv_a = tf_param(c, NAME("l%u_wkv_a"), 2, wkva);
        w->kv_norm = tf_param(c, NAME("l%u_kv_norm"), 1, kvn);
        w->wkv_b = tf_param(c, NAME("l%u_wkv_b"), 2, wkvb);
        const uint64_t wo[2] = {Hl * (uint64_t)s->v_head_dim, d};
        w->wo = tf_param(c, NAME("l%u_wo"), 2, wo);
        return;
    }
    const uint64_t wqkv[2] = {d, (Hl + 2 * Kl) * hd}, bias[1] = {(Hl + 2 * Kl) * hd}, qkn[2] = {2, hd},
                   wo[2] = {Hl * hd, d};
    w->wqkv = tf_param(c, NAME("l%u_wqkv"), 2, wqkv);
    if (s->qkv_bias)
        w->qkv_b = tf_param(c, NAME("l%u_qkv_b"), 1, bias);
    if (s->qk_norm)
        w->qk_norm = tf_param(c, NAME("l%u_qk_norm"), 2, qkn);
    w->wo = tf_param(c, NAME("l%u_wo"), 2, wo);
}

/* The MLP's parameters (dense or MoE). */
static void mlp_params(tf_ctx *c, const tf_dims *z, uint64_t l, tf_layer_w *w)
{
    const strata_model_shape *s = z->s;
    const uint64_t d = z->d, T = z->T;
    char name[64];
    if (!strata_model_layer_is_moe(s, (int64_t)l)) {
        const uint64_t up[2] = {d, (uint64_t)s->ffn / T}, down[2] = {(uint64_t)s->ffn / T, d};
        w->w1 = tf_param(c, NAME("l%u_w1"), 2, up);
        if (s->gated)
            w->w3 = tf_param(c, NAME("l%u_w3"), 2, up);
        w->w2 = tf_param(c, NAME("l%u_w2"), 2, down);
        return;
    }
    const uint64_t E = (uint64_t)s->experts, El = E / z->EP, Fe = (uint64_t)s->moe_ffn / T,
                   Fs = (uint64_t)s->shared_experts * Fe;
    const uint64_t wr[2] = {d, E}, up[3] = {El, d, Fe}, down[3] = {El, Fe, d}, sup[2] = {d, Fs}, sdown[2] = {Fs, d};
    w->router = tf_param(c, NAME("l%u_router"), 2, wr);
    w->we1 = tf_param(c, NAME("l%u_we1"), 3, up);
    if (s->gated)
        w->we3 = tf_param(c, NAME("l%u_we3"), 3, up);
    w->we2 = tf_param(c, NAME("l%u_we2"), 3, down);
    if (Fs > 0) {
        w->ws1 = tf_param(c, NAME("l%u_ws1"), 2, sup);
        if (s->gated)
            w->ws3 = tf_param(c, NAME("l%u_ws3"), 2, sup);
        w->ws2 = tf_param(c, NAME("l%u_ws2"), 2, sdown);
    }
}

/* Every parameter of layer l, declared in this order: ln1, the
 * attention's, ln2, the MLP's, then the post-norms. */
static void layer_params(tf_ctx *c, const tf_dims *z, uint64_t l, tf_layer_w *w)
{
    const uint64_t dvec[1] = {z->d};
    char name[64];
    for (wl_tensor *t = &w->ln1; t <= &w->ws2; t++)
        *t = WL_NONE;
    w->ln1 = tf_param(c, NAME("l%u_ln1"), 1, dvec);
    attention_params(c, z, l, w);
    w->ln2 = tf_param(c, NAME("l%u_ln2"), 1, dvec);
    mlp_params(c, z, l, w);
    if (z->s->post_norms) {
        w->ln1_post = tf_param(c, NAME("l%u_ln1_post"), 1, dvec);
        w->ln2_post = tf_param(c, NAME("l%u_ln2_post"), 1, dvec);
    }
}

/* out = x @ w + bias (a column-parallel projection with a bias). */
static uint32_t column_bias(tf_ctx *c, const tf_dims *z, const char *label, wl_tensor out, wl_tensor x,
                            wl_tensor w, wl_tensor bias, double flops)
{
    double n = (double)wl_graph_elements(c->g, out);
    wl_tensor ins[3] = {x, w, bias};
    uint32_t node = wl_model_node(c->m, label, out, ins, 3, flops + n, true);
    wl_model_vjp(c->m, node, 0, flops, &w, 1);
    wl_model_vjp(c->m, node, 1, flops, &x, 1);
    wl_model_vjp(c->m, node, 2, n, NULL, 0);
    wl_model_gemm_shapes(c->m, node, out, x, w); /* the gradients' GEMMs; the forward adds the bias */
    if (!z->sp)
        tf_partial(c, z, node, 0);
    return node;
}

/* ctx = attention over q, k, v (ins: qkv, or q and kv), heads of width dqk
 * (q, k) and dv (v), Kh key/value heads on this device. */
static wl_tensor attend(tf_ctx *c, const tf_dims *z, uint64_t l, const wl_tensor *ins, uint32_t n_ins, uint64_t dqk,
                        uint64_t dv, uint64_t Kh)
{
    wl_model *m = c->m;
    const uint64_t B = z->B, S = z->S, H = z->H / z->T, bhss[4] = {B, H, S, S}, ctxd[3] = {B, S, H * dv};
    char name[64], label[64];
#define LABEL(fmt) (g_snprintf(label, sizeof label, fmt, (unsigned)l), label)
    wl_tensor ctx;
    if (z->flash && z->CP > 1)
        return tf_ring_attend(c, z, l, ins[0], dqk, Kh);
    if (z->flash) {
        ctx = tf_act(c, NAME("l%u_ctx"), 3, ctxd);
        uint64_t dm = (dqk + dv) / 2, dims[6] = {B, H, S, S, dm, Kh};
        int64_t window = strata_model_layer_window(z->s, (int64_t)l);
        char mask[48];
        g_snprintf(mask, sizeof mask, "window-%" G_GINT64_FORMAT, window);
        strata_kernel_problem kp = {.n_dims = 5, .dims = dims, .causal = z->causal};
        if (z->causal && window > 0 && (uint64_t)window < S)
            kp.window = (uint64_t)window;
        double f = 0, bytes = 0;
        strata_kernel_find("flash-attention")->nominal(&kp, &f, &bytes);
        uint32_t node = wl_model_node(m, LABEL("l%u_attn"), ctx, ins, n_ins, f, false);
        wl_tensor needs[3] = {ins[0], n_ins > 1 ? ins[1] : ctx, ctx};
        for (uint32_t k = 0; k < n_ins; k++)
            wl_model_vjp(m, node, k, k == 0 ? 2.5 * f : 0, needs, n_ins + 1);
        wl_model_kernel(m, node, "flash-attention", "flash-attention-bwd", Kh == H ? 5 : 6, dims,
                        kp.window ? mask : z->causal ? "causal" : NULL);
        wl_model_checkpoint_name(m, node, "context");
        return ctx;
    }
    wl_tensor scores = tf_act(c, NAME("l%u_scores"), 4, bhss);
    double att = 2.0 * (double)(B * S) * (double)S * (double)(H * dqk);
    uint32_t sn = wl_model_node(m, LABEL("l%u_qk"), scores, ins, 1, att, true);
    wl_model_batch_dot(m, sn);
    wl_model_vjp(m, sn, 0, 2 * att, ins, 1); /* dq and dk: two GEMMs in one step, at the roofline */
    wl_model_gemm(m, sn, B * H, S, dqk, S, false);
    wl_tensor probs = tf_act(c, NAME("l%u_probs"), 4, bhss);
    double nss = (double)(B * H * S * S);
    uint32_t pn = wl_model_node(m, LABEL("l%u_softmax"), probs, &scores, 1, 5 * nss, false);
    wl_model_vjp(m, pn, 0, 4 * nss, &probs, 1);
    double att_v = 2.0 * (double)(B * S) * (double)S * (double)(H * dv);
    ctx = tf_act(c, NAME("l%u_ctx"), 3, ctxd);
    wl_tensor pv[2] = {probs, ins[n_ins - 1]};
    uint32_t cn = wl_model_node(m, LABEL("l%u_pv"), ctx, pv, 2, att_v, true);
    wl_model_batch_dot(m, cn);
    wl_model_checkpoint_name(m, cn, "context");
    wl_model_vjp(m, cn, 0, att_v, &pv[1], 1);
    wl_model_vjp(m, cn, 1, att_v, &probs, 1);
    wl_model_gemm(m, cn, B * H, S, S, dv, false);
    return ctx;
}

/* MLA's q and kv from a (transformer.h: one device or data meshes). */
static void mla_project(tf_ctx *c, const tf_dims *z, uint64_t l, const tf_layer_w *w, wl_tensor a, wl_tensor *q,
                        wl_tensor *kv)
{
    const strata_model_shape *s = z->s;
    const uint64_t B = z->B, S = z->S, d = z->d, H = z->H, ql = (uint64_t)s->q_lora_rank,
                   kvl = (uint64_t)s->kv_lora_rank, qk = (uint64_t)(s->qk_nope_head_dim + s->qk_rope_head_dim),
                   kva = kvl + (uint64_t)s->qk_rope_head_dim, kvb = H * (uint64_t)(s->qk_nope_head_dim + s->v_head_dim);
    const uint64_t bsql[3] = {B, S, ql}, bsq[3] = {B, S, H * qk}, bskva[3] = {B, S, kva}, bskvl[3] = {B, S, kvl},
                   bskv[3] = {B, S, kvb};
    double bs = (double)(B * S);
    char name[64], label[64];
    *q = tf_act(c, NAME("l%u_q"), 3, bsq);
    if (ql > 0) {
        wl_tensor cq = tf_act(c, NAME("l%u_cq"), 3, bsql), cqn = tf_act(c, NAME("l%u_cq_norm"), 3, bsql);
        wl_model_matmul(c->m, LABEL("l%u_q_a"), cq, a, w->wq_a, 2 * bs * (double)(d * ql));
        tf_norm(c, z, LABEL("l%u_q_norm"), cqn, cq, w->q_norm);
        wl_model_checkpoint_name(
            c->m, wl_model_matmul(c->m, LABEL("l%u_q_b"), *q, cqn, w->wq_b, 2 * bs * (double)(ql * H * qk)),
            "query_proj");
    } else
        wl_model_checkpoint_name(
            c->m, wl_model_matmul(c->m, LABEL("l%u_q_proj"), *q, a, w->wq_b, 2 * bs * (double)(d * H * qk)),
            "query_proj");
    wl_tensor ckv = tf_act(c, NAME("l%u_ckv"), 3, bskva), ckvn = tf_act(c, NAME("l%u_ckv_norm"), 3, bskvl);
    wl_model_matmul(c->m, LABEL("l%u_kv_a"), ckv, a, w->wkv_a, 2 * bs * (double)(d * kva));
    /* The norm reads the kv_lora part (the rope part goes to the keys as it is). */
    tf_norm(c, z, LABEL("l%u_kv_norm"), ckvn, ckv, w->kv_norm);
    *kv = tf_act(c, NAME("l%u_kv"), 3, bskv);
    wl_model_checkpoint_name(
        c->m, wl_model_matmul(c->m, LABEL("l%u_kv_b"), *kv, ckvn, w->wkv_b, 2 * bs * (double)(kvl * kvb)),
        "key_proj");
}

/* The attention block on a = norm(h): returns ctx [B,S,H/T x dv]. */
static wl_tensor attention(tf_ctx *c, const tf_dims *z, uint64_t l, const tf_layer_w *w, wl_tensor a)
{
    const strata_model_shape *s = z->s;
    if (s->kv_lora_rank > 0) {
        wl_tensor qkv[2];
        mla_project(c, z, l, w, a, &qkv[0], &qkv[1]);
        return attend(c, z, l, qkv, 2, (uint64_t)(s->qk_nope_head_dim + s->qk_rope_head_dim),
                      (uint64_t)s->v_head_dim, z->H);
    }
    wl_model *m = c->m;
    const uint64_t B = z->B, S = z->S, hd = (uint64_t)s->head_dim, Hl = z->H / z->T,
                   Kl = (uint64_t)s->kv_heads / z->T, cols = (Hl + 2 * Kl) * hd, bsq[3] = {B, S, cols};
    double bsd_n = (double)(B * S * z->d);
    char name[64], label[64];
    wl_tensor qkv = tf_act(c, NAME("l%u_qkv"), 3, bsq), in = tf_block_in(c, z, a);
    uint32_t pn = w->qkv_b != WL_NONE
                      ? column_bias(c, z, LABEL("l%u_qkv_proj"), qkv, in, w->wqkv, w->qkv_b, 2 * bsd_n * (double)cols)
                      : tf_column(c, z, LABEL("l%u_qkv_proj"), qkv, in, w->wqkv, 2 * bsd_n * (double)cols);
    wl_model_checkpoint_name(m, pn, "qkv_proj");
    if (w->qk_norm != WL_NONE) {
        wl_tensor qn = tf_act(c, NAME("l%u_qk_normed"), 3, bsq);
        double n = (double)(B * S * (Hl + Kl) * hd);
        wl_tensor ins[2] = {qkv, w->qk_norm};
        uint32_t node = wl_model_node(m, LABEL("l%u_qk_norm"), qn, ins, 2, 4 * n, false);
        wl_model_vjp(m, node, 0, 8 * n, ins, 2);
        wl_model_vjp(m, node, 1, 3 * n, &qkv, 1);
        tf_partial(c, z, node, 1); /* heads are split over the model axis */
        qkv = qn;
    }
    if (s->rope) {
        wl_tensor r = tf_act(c, NAME("l%u_qkv_rope"), 3, bsq);
        wl_model_unary(m, LABEL("l%u_rope"), r, qkv, 3, 3);
        qkv = r;
    }
    return attend(c, z, l, &qkv, 1, hd, hd, Kl);
}

/* act(x) for the MLP's hidden values: gelu or relu of u, or the gated
 * act(u) * v; returns the tensor the down projection reads. */
static wl_tensor activation(tf_ctx *c, const tf_dims *z, const char *name, const char *label, wl_tensor u,
                            wl_tensor v, wl_tensor y)
{
    const uint64_t *dims;
    uint32_t nd = wl_graph_dims(c->g, u, &dims);
    uint64_t copy[STRATA_MAX_DIMS];
    memcpy(copy, dims, nd * sizeof copy[0]);
    if (y == WL_NONE)
        y = tf_act(c, name, nd, copy);
    if (v == WL_NONE) {
        bool relu = z->s->mlp == STRATA_MLP_RELU;
        uint32_t node = wl_model_unary(c->m, label, y, u, relu ? 1 : 12, relu ? 1 : 20);
        if (wl_graph_flags(c->g, y) & WL_VARY)
            wl_model_vary(c->m, node);
        return y;
    }
    double n = (double)wl_graph_elements(c->g, u);
    wl_tensor ins[2] = {u, v};
    uint32_t node = wl_model_node(c->m, label, y, ins, 2, 6 * n, false);
    if (wl_graph_flags(c->g, y) & WL_VARY) /* an expert group's rows */
        wl_model_vary(c->m, node);
    wl_model_vjp(c->m, node, 0, 10 * n, ins, 2);
    wl_model_vjp(c->m, node, 1, 6 * n, &u, 1);
    return y;
}

/* A dense MLP on x (gathered first under sp when `gather`: the block
 * input) with matrices up (and gate-up up3) [d,F] and down [F,d] of hidden
 * width F into *out, a new [B,S,d] activation `out_name`: returns the node
 * writing it. */
static uint32_t dense_mlp(tf_ctx *c, const tf_dims *z, uint64_t l, const char *tag, wl_tensor x, bool gather,
                          wl_tensor up, wl_tensor up3, wl_tensor down, uint64_t F, const char *out_name,
                          wl_tensor *out)
{
    const uint64_t bsf[3] = {z->B, z->S, F};
    double bsd_n = (double)(z->B * z->S * z->d);
    char name[64], label[64], fmt[64];
#define TAGGED(f) (g_snprintf(fmt, sizeof fmt, f, tag), fmt)
    wl_tensor u = tf_act(c, NAME(TAGGED("l%%u_%s_up")), 3, bsf), v = WL_NONE;
    if (gather)
        x = tf_block_in(c, z, x);
    uint32_t in = tf_column(c, z, LABEL(TAGGED("l%%u_%s_in")), u, x, up, 2 * bsd_n * (double)F);
    wl_model_checkpoint_name(c->m, in, up3 != WL_NONE ? "mlpwi_0" : "mlpwi");
    if (up3 != WL_NONE) {
        v = tf_act(c, NAME(TAGGED("l%%u_%s_gate_up")), 3, bsf);
        wl_model_checkpoint_name(c->m, tf_column(c, z, LABEL(TAGGED("l%%u_%s_in3")), v, x, up3, 2 * bsd_n * (double)F),
                                 "mlpwi_1");
    }
    const char *act = v != WL_NONE ? "l%u_%s_glu" : z->s->mlp == STRATA_MLP_RELU ? "l%u_relu" : "l%u_gelu";
    g_snprintf(fmt, sizeof fmt, act, (unsigned)l, tag);
    char aname[64];
    g_strlcpy(aname, fmt, sizeof aname);
    wl_tensor g = activation(c, z, aname, aname, u, v, WL_NONE);
    const uint64_t bsd[3] = {z->B, z->S, z->d};
    *out = tf_act(c, out_name, 3, bsd);
    uint32_t dn = wl_model_matmul(c->m, LABEL(TAGGED("l%%u_%s_down")), *out, g, down, 2 * bsd_n * (double)F);
    wl_model_checkpoint_name(c->m, dn, "mlpwo");
    return dn;
#undef TAGGED
}

/* An activation of the experts' rows: per device under an imbalance. */
static wl_tensor rows_act(tf_ctx *c, const tf_dims *z, const char *name, uint32_t nd, const uint64_t *dims)
{
    return wl_graph_tensor(c->g, name, STRATA_TAG_ACTIVATION, c->dt, nd, dims, z->vary ? WL_VARY : WL_TEMP);
}

/* A node of the experts' own rows: its work per device under an imbalance. */
static uint32_t rows_node(tf_ctx *c, const tf_dims *z, uint32_t node)
{
    if (z->vary)
        wl_model_vary(c->m, node);
    return node;
}

/* The routed experts on x: the rows dispatched (to each expert's buffer;
 * over the expert axis by an all-to-all, moe_load.h), each local expert's
 * gated MLP on its rows, and the rows sent back (an all-to-all); returns
 * the experts' output as the combine reads it. Without z->moe: [E, C, d]
 * with C = ceil(B S k / E), every expert on this device. */
static wl_tensor experts(tf_ctx *c, const tf_dims *z, uint64_t l, const tf_layer_w *w, wl_tensor x, double routed)
{
    wl_model *m = c->m;
    const strata_model_shape *s = z->s;
    const uint64_t E = (uint64_t)s->experts, C = (z->B * z->S * (uint64_t)s->top_k + E - 1) / E, d = z->d,
                   Fe = (uint64_t)s->moe_ffn / z->T, send = z->moe ? z->moe->send_rows : E * C,
                   rows = z->moe ? z->moe->max_rows : E * C;
    const uint64_t ecd[3] = {E, C, d}, ecf[3] = {E, C, Fe}, sd[2] = {send, d}, rf[2] = {rows, Fe};
    const uint32_t nd = z->moe ? 2 : 3;
    const uint64_t *xdims = z->moe ? sd : ecd, *fdims = z->moe ? rf : ecf;
    const double ef = 2.0 * (double)rows * (double)(d * Fe);
    char name[64], label[64];
    wl_tensor xe = tf_act(c, NAME("l%u_dispatch"), nd, xdims);
    uint32_t dn = wl_model_node(m, LABEL("l%u_dispatch"), xe, &x, 1, routed, false);
    wl_model_vjp(m, dn, 0, routed, NULL, 0);
    if (z->EP > 1) { /* Megatron's alltoall dispatcher (token_dispatcher.py:375-387) */
        wl_tensor xr = tf_act(c, NAME("l%u_dispatch_a2a"), nd, xdims);
        wl_model_all_to_all(m, xr, xe, TF_EXPERT_AXIS);
        xe = xr;
    }
    wl_tensor u = rows_act(c, z, NAME("l%u_experts_up"), nd, fdims), v = WL_NONE;
    uint32_t in = rows_node(c, z, tf_column(c, z, LABEL("l%u_experts_in"), u, xe, w->we1, ef));
    wl_model_batch_dot(m, in);
    wl_model_checkpoint_name(m, in, w->we3 != WL_NONE ? "mlpwi_0" : "mlpwi");
    if (w->we3 != WL_NONE) {
        v = rows_act(c, z, NAME("l%u_experts_gate_up"), nd, fdims);
        in = rows_node(c, z, tf_column(c, z, LABEL("l%u_experts_in3"), v, xe, w->we3, ef));
        wl_model_batch_dot(m, in);
        wl_model_checkpoint_name(m, in, "mlpwi_1");
    }
    wl_tensor g = z->vary ? rows_act(c, z, NAME("l%u_experts_glu"), nd, fdims) : WL_NONE;
    g = activation(c, z, NAME("l%u_experts_glu"), LABEL("l%u_experts_glu"), u, v, g);
    wl_tensor ye = tf_act(c, NAME("l%u_experts_out"), nd, xdims);
    uint32_t down = rows_node(c, z, wl_model_matmul(m, LABEL("l%u_experts_down"), ye, g, w->we2, ef));
    wl_model_batch_dot(m, down);
    wl_model_checkpoint_name(m, down, "mlpwo");
    if (z->EP > 1) {
        wl_tensor yc = tf_act(c, NAME("l%u_combine_a2a"), nd, xdims);
        wl_model_all_to_all(m, yc, ye, TF_EXPERT_AXIS);
        ye = yc;
    }
    return ye;
}

/* The MoE MLP on b into *out (NAME l_mlp_out): returns the node writing it
 * (a partial sum under tp). */
static uint32_t moe_mlp(tf_ctx *c, const tf_dims *z, uint64_t l, const tf_layer_w *w, wl_tensor b, wl_tensor *out)
{
    wl_model *m = c->m;
    const strata_model_shape *s = z->s;
    const uint64_t B = z->B, S = z->S, d = z->d, E = (uint64_t)s->experts, k = (uint64_t)s->top_k,
                   Fe = (uint64_t)s->moe_ffn / z->T;
    const uint64_t bse[3] = {B, S, E}, bsk[3] = {B, S, k};
    const double routed = (double)(B * S * k * d);
    char name[64], label[64];
    wl_tensor x = tf_block_in(c, z, b);
    wl_tensor logits = tf_act(c, NAME("l%u_router_logits"), 3, bse), gates = tf_act(c, NAME("l%u_gates"), 3, bsk);
    wl_model_matmul(m, LABEL("l%u_router"), logits, x, w->router, 2 * (double)(B * S) * (double)(d * E));
    uint32_t tn = wl_model_node(m, LABEL("l%u_topk"), gates, &logits, 1, 5 * (double)(B * S * E), false);
    wl_model_vjp(m, tn, 0, 5 * (double)(B * S * E), &logits, 1);
    wl_tensor ye = experts(c, z, l, w, x, routed);
    const uint64_t bsd[3] = {B, S, d};
    wl_tensor y = tf_act(c, NAME(w->ws1 != WL_NONE ? "l%u_routed_out" : "l%u_mlp_out"), 3, bsd);
    wl_tensor cins[2] = {ye, gates};
    uint32_t cn = wl_model_node(m, LABEL("l%u_combine"), y, cins, 2, 2 * routed, false);
    wl_model_vjp(m, cn, 0, routed, &gates, 1);
    wl_model_vjp(m, cn, 1, routed, &ye, 1);
    *out = y;
    if (w->ws1 == WL_NONE)
        return cn;
    wl_tensor sh;
    dense_mlp(c, z, l, "shared", x, false, w->ws1, w->ws3, w->ws2, (uint64_t)s->shared_experts * Fe,
              NAME("l%u_shared_out"), &sh);
    *out = tf_act(c, NAME("l%u_mlp_out"), 3, bsd);
    return wl_model_add(m, LABEL("l%u_moe_sum"), *out, y, sh);
}

/* norm(x) with the scale `scale` into a new activation NAME. */
static wl_tensor post_norm(tf_ctx *c, const tf_dims *z, const char *name, wl_tensor x, wl_tensor scale)
{
    const uint64_t *dims;
    uint32_t nd = wl_graph_dims(c->g, x, &dims);
    uint64_t copy[STRATA_MAX_DIMS];
    memcpy(copy, dims, nd * sizeof copy[0]);
    wl_tensor y = tf_act(c, name, nd, copy);
    tf_norm(c, z, name, y, x, scale);
    return y;
}

wl_tensor tf_layer(tf_ctx *c, const tf_dims *z, uint64_t l, wl_tensor h)
{
    wl_model *m = c->m;
    const strata_model_shape *s = z->s;
    const uint64_t B = z->B, S = z->S, d = z->d, Sl = z->sp ? S / z->T : S, bsd[3] = {B, S, d},
                   bsdl[3] = {B, Sl, d};
    char name[64], label[64];
    tf_layer_w w;
    layer_params(c, z, l, &w);
    wl_model_group(m, (int)l, true);
    wl_tensor a = tf_act(c, NAME("l%u_ln1_out"), 3, bsdl);
    tf_norm(c, z, LABEL("l%u_ln1"), a, h, w.ln1);
    wl_tensor ctx = attention(c, z, l, &w, a);
    uint64_t ctx_w = (z->H / z->T) * (uint64_t)(s->kv_lora_rank > 0 ? s->v_head_dim : s->head_dim);
    wl_tensor o = tf_act(c, NAME("l%u_attn_out"), 3, bsd);
    uint32_t on = wl_model_matmul(m, LABEL("l%u_out_proj"), o, ctx, w.wo, 2 * (double)(B * S * d) * (double)ctx_w);
    wl_model_checkpoint_name(m, on, "out_proj");
    o = tf_block_out(c, z, on, o);
    if (w.ln1_post != WL_NONE)
        o = post_norm(c, z, NAME("l%u_ln1_post_out"), o, w.ln1_post);
    wl_tensor h1 = tf_act(c, NAME("l%u_resid1"), 3, bsdl);
    wl_model_add(m, LABEL("l%u_add1"), h1, h, o);
    wl_tensor b = tf_act(c, NAME("l%u_ln2_out"), 3, bsdl);
    tf_norm(c, z, LABEL("l%u_ln2"), b, h1, w.ln2);
    wl_tensor f;
    uint32_t fn = w.router != WL_NONE ? moe_mlp(c, z, l, &w, b, &f)
                                      : dense_mlp(c, z, l, "mlp", b, true, w.w1, w.w3, w.w2, (uint64_t)s->ffn / z->T,
                                                  NAME("l%u_mlp_out"), &f);
    f = tf_block_out(c, z, fn, f);
    if (w.ln2_post != WL_NONE)
        f = post_norm(c, z, NAME("l%u_ln2_post_out"), f, w.ln2_post);
    g_snprintf(name, sizeof name, "h_%u", (unsigned)(l + 1));
    wl_tensor hn = tf_act(c, name, 3, bsdl);
    wl_model_add(m, LABEL("l%u_add2"), hn, h1, f);
    return hn;
}
#undef LABEL
#undef NAME
