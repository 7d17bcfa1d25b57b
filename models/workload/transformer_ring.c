/*
 * transformer_ring.c: ring attention over the `context` mesh axis (context
 * parallelism), as Megatron runs it through Transformer Engine's
 * AttnFuncWithCPAndKVP2P (cp_comm_type=p2p; TE
 * transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py
 * at d0067d0, lines 1356-1886, 2229-2494) and Ring Attention (Liu et al.,
 * arXiv 2310.01889) describe it.
 *
 * Every activation holds the device's S/cp positions (tf_dims.S). With a
 * causal mask the sequence is cut into 2 cp chunks and rank i holds chunks
 * i and 2cp-1-i (Megatron utils.py:2504-2560), so that every step of the
 * ring is the same work: step 0 ("diagonal") is the device's own queries
 * against its own keys, causal; each later step is half a block: all of
 * Q against the first half of the received KV (ranks past the step) or the
 * second half of Q against all of it (TE lines 1780-1886); this SPMD
 * program writes every such step as the first form (Sq = S/cp, Skv =
 * S/2cp), the two having the same work. Without a mask each step is the
 * full S/cp x S/cp block. Either way each of the cp steps does 1/cp^2 of
 * the unsplit attention's flops, 1/cp in all.
 *
 * Per layer, on each device (l = layer, i = 0 .. cp-1):
 *   l_kv0      = the device's K and V [B, S/cp, 2 Kh hd] (a slice of qkv)
 *   l_kv{i+1}  = ring pass of l_kv{i} (a collective-permute, shift +1, on
 *                stream `ring`, issued before step i's block so that it
 *                overlaps it: TE's double buffer), for i < cp-1;
 *   l_ring{i}  = flash-attention of q against l_kv{i}, merged into the
 *                running output l_ring{i-1} (log-sum-exp correction, one
 *                flop per element); l_ring{cp-1} is the layer's ctx.
 * So cp-1 KV blocks of 2 (S/cp) B Kh hd elements each are passed per layer
 * forward. Backward (autodiff.h): the blocks are passed around again before
 * the layer's gradients (not saved between the passes, as TE re-sends KV),
 * and each step's dKV goes back the other way (shift -1, on stream `ring`,
 * overlapping the next step's gradients) and is added to the previous
 * block's: about twice the forward's bytes (TE lines 2460-2494). The gradient kernels are counted by their flops (2.5 times the
 * step's, FlashAttention-2's count), the forward steps by their kernel.
 */
#include "workload/transformer.h"

wl_tensor tf_ring_attend(tf_ctx *c, const tf_dims *z, uint64_t l, wl_tensor qkv, uint64_t hd, uint64_t Kh)
{
    wl_model *m = c->m;
    const uint64_t B = z->B, S = z->S, cp = z->CP, H = z->H / z->T, kvd[3] = {B, S, 2 * Kh * hd},
                   ctxd[3] = {B, S, H * hd};
    char name[64], label[64];
    g_snprintf(name, sizeof name, "l%u_kv0", (unsigned)l);
    wl_tensor kv = tf_act(c, name, 3, kvd);
    double kv_n = (double)(B * S * 2 * Kh * hd), ctx_n = (double)(B * S * H * hd);
    g_snprintf(label, sizeof label, "l%u_kv_block", (unsigned)l);
    uint32_t sn = wl_model_node(m, label, kv, &qkv, 1, 0, false);
    wl_model_vjp(m, sn, 0, kv_n, NULL, 0);
    wl_tensor acc = WL_NONE, ctx = WL_NONE, kvs[64];
    uint32_t steps[64];
    g_assert(cp <= G_N_ELEMENTS(steps)); /* the generator checked context <= 64 */
    for (uint64_t i = 0; i < cp; i++) {
        kvs[i] = kv;
        if (i + 1 < cp) {
            g_snprintf(name, sizeof name, "l%u_kv%u", (unsigned)l, (unsigned)(i + 1));
            wl_tensor next = tf_act(c, name, 3, kvd);
            wl_model_ring_pass(m, next, kv, TF_CONTEXT_AXIS);
            kv = next;
        }
        bool diag = i == 0;
        uint64_t Skv = z->causal && !diag ? S / 2 : S, dims[6] = {B, H, S, Skv, hd, Kh};
        double f = 4.0 * (double)(B * H) * (double)S * (double)Skv * (double)hd / (z->causal && diag ? 2.0 : 1.0);
        g_snprintf(name, sizeof name, i + 1 < cp ? "l%u_ring%u" : "l%u_ctx", (unsigned)l, (unsigned)i);
        ctx = tf_act(c, name, 3, ctxd);
        wl_tensor ins[3] = {qkv, kvs[i], acc};
        g_snprintf(label, sizeof label, "l%u_attn%u", (unsigned)l, (unsigned)i);
        steps[i] = wl_model_node(m, label, ctx, ins, acc != WL_NONE ? 3 : 2, f + (acc != WL_NONE ? ctx_n : 0), false);
        wl_model_kernel(m, steps[i], "flash-attention", NULL, Kh == H ? 5 : 6, dims,
                        z->causal && diag ? "causal" : NULL);
        acc = ctx;
    }
    /* The gradients read the layer's ctx (the last step's output, saved)
     * and not the running outputs, which are freed after the next step. */
    for (uint64_t i = 0; i < cp; i++) {
        double f = 4.0 * (double)(B * H) * (double)S * (double)(z->causal && i > 0 ? S / 2 : S) * (double)hd *
                   (z->causal && i == 0 ? 0.5 : 1.0);
        wl_tensor needs[3] = {qkv, kvs[i], ctx};
        wl_model_vjp(m, steps[i], 0, 2.5 * f, needs, 3);
        wl_model_vjp(m, steps[i], 1, 0, needs, 3);
        if (i > 0)
            wl_model_vjp(m, steps[i], 2, ctx_n, NULL, 0);
    }
    wl_model_checkpoint_name(m, steps[cp - 1], "context");
    return ctx;
}
