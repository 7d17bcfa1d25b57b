/*
 * serve_mla_prefill_v1.c: vLLM V1's MLA prefill kernels beyond serve_cost.c's (serve_mla_prefill_v1.h, with its
 * sources).
 */
#include "serve/serve_mla_prefill_v1.h"
#include "serve/serve_mla_prefill_v07.h"

/* The RoPE's kernels (CUDA): q_pe made contiguous (read and written), ops.rotary_embedding (the cos/sin rows read,
 * q_pe and k_pe read and written), q_pe copied back into q */
static double rope_s(strata_serve_pass_fn pass, const void *ctx, const strata_serve_mla_v1_chunk *ch)
{
    uint64_t q = ch->tokens * ch->heads * ch->rope, k = ch->tokens * ch->rope;
    double copy = 2.0 * (double)q * ch->act;
    return pass(ctx, q, copy) + pass(ctx, q + k, (2.0 * (double)(q + k) + (double)k) * ch->act) + pass(ctx, q, copy);
}

double strata_serve_mla_v1_prefill_passes_s(strata_serve_pass_fn pass, const void *ctx,
                                            const strata_serve_mla_v1_chunk *ch)
{
    uint64_t t = ch->tokens, ctxk = ch->context > t ? ch->context : t, prior = ctxk - t;
    if (!t)
        return 0;
    uint64_t qk = ch->nope + ch->rope, kv = ctxk * ch->heads, lat = ch->kv_lora + ch->rope;
    double s = ch->fused_rope ? rope_s(pass, ctx, ch) : 0;
    /* concat_and_cache_mla: the chunk's latent rows read, written into the cache */
    s += pass(ctx, t * lat, (double)(t * lat) * (ch->act + ch->kv_bytes));
    /* k = cat(k_nope, k_pe.expand) over every key: reads kv x nope and context x rope, writes kv x (nope + rope) */
    s += pass(ctx, kv * qk, ((double)(kv * ch->nope) + (double)(ctxk * ch->rope) + (double)(kv * qk)) * ch->act);
    if (ch->pad_v) /* v padded to q's width: reads kv x v, writes kv x (nope + rope) */
        s += pass(ctx, kv * qk, ((double)(kv * ch->v) + (double)(kv * qk)) * ch->act);
    if (prior) {
        uint64_t w = ch->pad_v ? qk : ch->v, o = t * ch->heads * w;
        /* gather_cache: the prior tokens' cache rows read, written into the workspace in the model's dtype */
        s += pass(ctx, prior * lat, (double)(prior * lat) * (ch->kv_bytes + ch->act));
        /* merge_attn_states: two outputs and two fp32 log-sum-exps read, one output written */
        s += pass(ctx, o, 3.0 * (double)o * ch->act + 2.0 * (double)(t * ch->heads) * 4.0);
    }
    if (ch->pad_v) { /* the output's [..., :v] slice reshaped: t x heads x v read and written */
        uint64_t out = t * ch->heads * ch->v;
        s += pass(ctx, out, 2.0 * (double)out * ch->act);
    }
    return s;
}

double strata_serve_mla_v1_step_s(strata_serve_pass_fn pass, const void *ctx, const strata_model_shape *s,
                                  uint64_t tokens, uint64_t contexts, uint64_t heads, double act, double kv_bytes,
                                  bool pad_v, bool fused_rope)
{
    strata_serve_mla_v1_chunk ch = {tokens, contexts, heads, (uint64_t)s->qk_nope_head_dim,
                                    (uint64_t)s->qk_rope_head_dim, (uint64_t)s->v_head_dim,
                                    (uint64_t)s->kv_lora_rank, act, kv_bytes, pad_v, fused_rope};
    return strata_serve_mla_v1_prefill_passes_s(pass, ctx, &ch);
}

bool strata_serve_mla_v1_pads_v(const char *release_row, const strata_hw *hw)
{
    return strata_serve_mla_v07_pads_v(release_row ? release_row : "unless-fa3-hopper", hw);
}
