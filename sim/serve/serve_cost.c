/* serve_cost.c: a served model's step time from the kernel models (serve_cost.h). */
#include "serve/serve_cost.h"
#include <math.h>
#include <string.h>
#include "collective/coll_sched.h"
#include "core/error.h"
#include "kernel/kernel.h"
#include "serve/serve_allreduce.h"
#include "serve/serve_coll.h"
#include "serve/serve_links.h"
#include "serve/serve_moe_route.h"
#include "serve/serve_decode.h"
#include "serve/serve_triton_gemm.h"
#include "serve/serve_qk_norm.h"
#include "serve/serve_mla_prefill_v07.h"
#include "serve/serve_mla_prefill_v1.h"
#include "serve/serve_mla_kernels.h"

struct strata_serve_cost {
    const strata_hw *hw;
    const strata_hw *sustained; /* hw at its sustained clock, for compute-bound ops (NULL: none) */
    strata_serve_model m;
    strata_model_shape s;     /* m's shape (issue 42's): MLP matrices, MoE layers, MLA widths */
    uint32_t moe_layers;
    uint32_t tp, unit;
    uint32_t dp;              /* attention data parallelism over the tp ranks (tp), else 1 */
    uint32_t attn_tp;         /* ranks the attention is split over: tp, or 1 under dp */
    double mem_bw;
    const strata_kernel_model *gemm, *grouped, *flash, *elementwise;
    strata_serve_links links; /* the all-reduces' route (tp > 1) and the host's (serve_links.h) */
    uint32_t max_tokens;
    double *dense;            /* per T, NAN until computed; then per T of a step of absorbed MLA decodes only */
    strata_serve_work *work;  /* non-NULL: ops add their nominal flops and bytes here */
    const strata_serve_decode_kernel *decode; /* GQA decode attention's kernel (NULL: the flash op) */
    const strata_serve_allreduce *ar;         /* the TP all-reduce's implementation (NULL: NCCL) */
    bool fa3_prefill;                         /* GQA prefill attention as FlashAttention-3 moves its bytes */
    bool fa2;                                 /* GQA attention as FA2's own kernels, vLLM 0.6's entries */
    bool triton_moe;                          /* block-scaled routed experts as Triton's fused_moe (serve_cost.h) */
    const strata_serve_triton_moe_configs *moe_cfg; /* its release's config file (NULL: vllm-645d18fa's) */
    const strata_serve_triton_gemm *block_gemm; /* block-FP8 Linears' Triton kernel (serve_cost.h; NULL: gemm row) */
    const strata_serve_fp8_linear *fp8_lin;   /* per-tensor FP8 Linears' ROCm pattern (serve_cost.h; NULL: none) */
    const strata_serve_fused_moe_bf16 *bf16_moe; /* unquantized experts' fused_moe default config (NULL: grouped) */
    const strata_serve_moe_gate *gate;        /* the routing kernels beyond one (serve_moe_gate.h; NULL: none) */
    const strata_serve_attn_aux *aux;         /* the kernels around GQA attention (NULL: qkv_preprocess) */
    const strata_serve_sampler *sampler;      /* the decoder's kernels over the sampled rows' logits (NULL: none) */
    bool gather_logits, embed_allreduce;      /* the vocabulary's collectives at tp > 1 (serve_cost.h) */
    bool logits_to_root;                      /* gather_logits to rank 0 only, by p2p sends (serve_cost.h) */
    strata_serve_coll *coll;                  /* the library collectives' simulated times (tp > 1) */
    const strata_serve_mla_kernels *mla_k;    /* the engine's MLA-layer kernels beyond these ops (NULL: none) */
    bool mla_absorb, pad_v, mla_v1;           /* V0's absorbed MLA weights; MLA prefill's v padded; V1's (.h) */
    bool coll_owned;                          /* coll is this model's own (else borrowed) */
};

/* The engine runs FlashAttention-2's own kernels on this cache (vLLM 0.6's FLASH_ATTN); vLLM 0.6's selector takes
 * XFormers instead for an FP8 cache or a sliding window (attention/selector.py, which_attn_to_use): not modelled,
 * the engine's kernel then. */
static bool fa2_runs(const strata_serve_cost *c, strata_dtype kv)
{
    return c->fa2 && strata_serve_dtype_bytes(kv) >= 2 && !c->m.sliding_window;
}

/* An op's kernel cost, its nominal work counted; bytes > 0 replaces the bytes the kernel model says it moves (at the
 * model's stream efficiency), for a kernel that moves fewer than its row assumes (MLA decode reads one latent as K and
 * V); window > 0 (with causal) is the flash row's mask=window-W, a causal sliding window of W keys. */
static void kernel_cost(const strata_serve_cost *c, const strata_kernel_model *k, strata_dtype dtype,
                        const uint64_t *dims, uint32_t n_dims, bool causal, uint64_t window, double bytes,
                        strata_kernel_cost *kc)
{
    /* attention: each engine's own kernel (FA3 in vLLM v1, TensorRT-LLM's FMHA, FlashInfer), not FA2's launch,
     * unless the engine runs FA2 (vLLM 0.6): varlen entries, paged for a decode or a chunk after cached keys */
    bool fa2 = k == c->flash && fa2_runs(c, dtype);
    strata_kernel_problem p = {.n_dims = n_dims, .dims = dims, .causal = causal, .window = window, .dtype = dtype,
                               .block_scaled = c->m.weight_block > 0 && (k == c->gemm || k == c->grouped),
                               .engine_attention = k == c->flash && !fa2, .fa2_varlen = fa2,
                               .fa2_paged = fa2 && (!causal || dims[3] > dims[2])};
    strata_kernel_cost_of(k, c->hw, c->unit, &p, kc);
    double scale = bytes > 0 && kc->bytes_nominal > 0 ? bytes / kc->bytes_nominal : 1.0;
    /* an op whose work outlasts its bytes at the peak's clock keeps the tensor cores busy and the power at its
     * limit: it runs at the sustained clock (serve_cost.h); its bytes do not change */
    if (c->sustained && kc->compute_s > kc->bytes * scale / c->mem_bw)
        strata_kernel_cost_of(k, c->sustained, c->unit, &p, kc);
    if (scale != 1.0) {
        kc->bytes *= scale;
        kc->bytes_nominal = bytes;
    }
    if (c->work) {
        c->work->flops += kc->flops;
        c->work->bytes += kc->bytes_nominal;
    }
}

/* An op's time: the slower of its compute and its bytes, then its fixed time. */
static double op_time_masked(const strata_serve_cost *c, const strata_kernel_model *k, strata_dtype dtype,
                             const uint64_t *dims, uint32_t n_dims, bool causal, uint64_t window, double bytes)
{
    strata_kernel_cost kc = {0};
    kernel_cost(c, k, dtype, dims, n_dims, causal, window, bytes, &kc);
    double mem = c->mem_bw > 0 ? kc.bytes / c->mem_bw : 0;
    return fmax(kc.compute_s, mem) + kc.fixed_s;
}

static double op_time_bytes(const strata_serve_cost *c, const strata_kernel_model *k, strata_dtype dtype,
                            const uint64_t *dims, uint32_t n_dims, bool causal, double bytes)
{
    return op_time_masked(c, k, dtype, dims, n_dims, causal, 0, bytes);
}

static double op_time(const strata_serve_cost *c, const strata_kernel_model *k, strata_dtype dtype,
                      const uint64_t *dims, uint32_t n_dims, bool causal)
{
    return op_time_bytes(c, k, dtype, dims, n_dims, causal, 0);
}

static double gemm(const strata_serve_cost *c, uint64_t m, uint64_t k, uint64_t n)
{
    return m && k && n ? op_time(c, c->gemm, c->m.dtype, (uint64_t[3]){m, k, n}, 3, false) : 0;
}

/* A Linear layer's product: gemm's, or under block-scaled FP8 with the engine's Triton kernel (block_gemm) the
 * slower of its programs' waves (serve_triton_gemm.h) and the row's compute and bytes, then the row's fixed time. */
static double linear(const strata_serve_cost *c, uint64_t m, uint64_t k, uint64_t n)
{
    if (!c->block_gemm || !c->m.weight_block || c->m.dtype != STRATA_DTYPE_F8 || !m || !k || !n)
        return strata_serve_fp8_linear_gemm(c->fp8_lin, c->hw, true, m, k, n, /* fp8_lin: padded rows, skinny */
                                            gemm(c, strata_serve_fp8_linear_rows(c->fp8_lin, m), k, n));
    strata_kernel_cost kc = {0};
    strata_serve_triton_gemm_time tg = {0};
    kernel_cost(c, c->gemm, c->m.dtype, (uint64_t[3]){m, k, n}, 3, false, 0, 0, &kc);
    strata_serve_triton_gemm_time_of(c->block_gemm, m, k, n, strata_hw_compute(c->hw, c->unit)->kernel.sms,
                                     strata_hw_compute_flops(c->hw, c->unit, STRATA_DTYPE_F8),
                                     strata_hw_compute_flops(c->hw, c->unit, STRATA_DTYPE_F32), c->mem_bw, &tg);
    return fmax(fmax(tg.s, kc.compute_s), c->mem_bw > 0 ? kc.bytes / c->mem_bw : 0) + kc.fixed_s;
}
static double linear_cb(const void *c, uint64_t m, uint64_t k, uint64_t n) { return linear(c, m, k, n); }

/* An m x k x n product whose weight stays in bf16 under narrower weights (the model's own dtype when that is 2
 * bytes or more): the LM head, which ModelOpt exports every 8-bit (and 4-bit) checkpoint without quantizing
 * (NVIDIA/TensorRT-Model-Optimizer @87f791d6, modelopt/torch/export/unified_export_hf.py, _export_hf_checkpoint:
 * FP8 -> "exclude_modules": ["lm_head"]), the checkpoints TensorRT-LLM and NIM's FP8 profiles serve; and the
 * absorbed MLA's W_QR (projections()). lm_head: the fork's wvSplitK may run it (fp8_lin; never W_QR). */
static double bf16_weight_gemm(const strata_serve_cost *c, uint64_t m, uint64_t k, uint64_t n, bool lm_head)
{
    strata_dtype dt = strata_serve_dtype_bytes(c->m.dtype) < 2 ? STRATA_DTYPE_BF16 : c->m.dtype;
    double t = m && k && n ? op_time(c, c->gemm, dt, (uint64_t[3]){m, k, n}, 3, false) : 0;
    return lm_head ? strata_serve_fp8_linear_gemm(c->fp8_lin, c->hw, false, m, k, n, t) : t; /* skinny: LM head only */
}

/* B independent products m x k x n in one kernel (a bmm). */
static double bgemm(const strata_serve_cost *c, uint64_t b, uint64_t m, uint64_t k, uint64_t n)
{
    return b && m && k && n ? op_time(c, c->gemm, c->m.dtype, (uint64_t[4]){b, m, k, n}, 4, false) : 0;
}

/* An MoE layer's b experts, m rows each, in one grouped GEMM (the
 * grouped-gemm kernel: the grouped kernel's own tiles and k-blocks). */
static double grouped_gemm(const strata_serve_cost *c, uint64_t b, uint64_t m, uint64_t k, uint64_t n)
{
    return b && m && k && n ? op_time(c, c->grouped, c->m.dtype, (uint64_t[4]){b, m, k, n}, 4, false) : 0;
}

/* The same product as Triton's fused_moe_kernel runs it in a step of t tokens (serve_triton_moe.h): its
 * tiles' MMA time at the measured rate against the grouped row's bytes, then the row's fixed time. */
static double triton_gemm(const strata_serve_cost *c, uint64_t t, uint64_t b, uint64_t m, uint64_t k, uint64_t n)
{
    strata_kernel_cost kc = {0};
    if (!b || !m || !k || !n)
        return 0;
    kernel_cost(c, c->grouped, c->m.dtype, (uint64_t[4]){b, m, k, n}, 4, false, 0, 0, &kc);
    uint32_t width = (c->m.moe_intermediate ? c->m.moe_intermediate : c->m.intermediate) / c->tp;
    double mma = strata_serve_triton_moe_compute_of(strata_serve_triton_moe_configs_for(c->moe_cfg, c->m.experts,
                                                                                        width), t, b * m, b, k, n,
                                                    strata_hw_compute(c->hw, c->unit)->kernel.sms,
                                                    strata_hw_compute_flops(c->hw, c->unit, STRATA_DTYPE_F8));
    return fmax(mma, c->mem_bw > 0 ? kc.bytes / c->mem_bw : 0) + kc.fixed_s;
}

/* A pass over n elements that moves `bytes` (one kernel: its launch, the bytes at the stream rate). */
static double stream_pass(const strata_serve_cost *c, uint64_t n, double bytes)
{
    return op_time_bytes(c, c->elementwise, c->m.dtype, (uint64_t[1]){n ? n : 1}, 1, false, bytes);
}
static double pass_cb(const void *c, uint64_t elements, double bytes) { return stream_pass(c, elements, bytes); }

/* The activations' bytes per element: bf16 under 8-bit weights (an FP8
 * GEMM writes bf16, strata_kernel_out_bytes), else the dtype's. */
static double act_bytes(const strata_serve_cost *c)
{
    return fmax(2.0, strata_serve_dtype_bytes(c->m.dtype));
}

/* A norm or residual pass over n activation elements (an RMSNorm, a residual add; TensorRT-LLM's fused add + RMSNorm
 * is two of them): each element read and written once in the activations' dtype, bf16 under 8-bit weights
 * (TensorRT-LLM's RMSNorm runs in config.torch_dtype, modeling_llama.py; the GEMMs write bf16). */
static double elementwise(const strata_serve_cost *c, uint64_t n)
{
    return n ? stream_pass(c, n, 2.0 * (double)n * act_bytes(c)) : 0;
}

/* The MLP's activation on t tokens of width w (one kernel): gated (SwiGLU: vLLM's silu_and_mul, TensorRT-LLM's swiglu)
 * reads the gate and up halves, 2 x t x w, and writes t x w; plain reads and writes t x w. It reads the GEMM's output
 * (activations' dtype) and writes the next GEMM's input: FP8 under 8-bit weights (TensorRT-LLM's GatedMLP passes
 * quant_scale = down_proj.input_scale to swiglu, gated_mlp.py), else the activations' dtype; under block-scaled FP8
 * (weight_block) or fp8_lin (serve_fp8_linear.h) the activations' dtype, the down projection quantizing its own input
 * (block_quant). The routed experts' activation is the same pass (experts_grouped). */
static double mlp_activation(const strata_serve_cost *c, uint64_t t, uint64_t w)
{
    double up = (c->s.gated ? 2.0 : 1.0) * (double)w;
    bool wide = c->m.weight_block || (c->fp8_lin && c->fp8_lin->wide_activation); /* down_proj quantizes */
    double in = wide ? act_bytes(c) : strata_serve_dtype_bytes(c->m.dtype);
    return t && w ? stream_pass(c, t * w, (double)t * (up * act_bytes(c) + (double)w * in)) : 0;
}

static bool allreduce_fuses_norm(const strata_serve_cost *c, uint64_t t);

/* TensorRT-LLM's FP8 Linear (FP8QDQLinearMethod.apply) quantizes a bf16 input before its GEMM (t x hidden read
 * in bf16, written in FP8). Inputs that arrive quantized run none: o_proj's, down_proj's, and with TP and hidden
 * > 4096 qkv_proj's and (no attention DP) gate_up_proj's, fused into the all-reduce's epilogue, but only in
 * TensorRT-LLM's own all-reduce kernels (allreduce_fuses_norm; NCCL's fallback and vLLM's all-reduce run it as a
 * kernel of its own; engine none takes the fusion). Sources, lines: docs/serving.md at `FP8QDQLinearMethod` and
 * `fallbackRunSubsequentOps`. The pass before qkv (qkv = true) or a dense MLP's gate_up on t tokens; 0 when fused
 * or the weights are not 8-bit. */
static double fp8_input_quant(const strata_serve_cost *c, uint64_t t, bool qkv)
{
    double in = strata_serve_dtype_bytes(c->m.dtype), act = act_bytes(c);
    bool fused = c->tp > 1 && c->m.hidden > 4096 && (qkv || c->dp == 1) &&
                 (c->dp > 1 || !c->ar || allreduce_fuses_norm(c, t));
    if (in >= act || fused || !t || (c->fp8_lin && c->fp8_lin->inputs_fp8)) /* the norm writes FP8: no pass */
        return 0;
    return stream_pass(c, t * c->m.hidden, (double)t * (double)c->m.hidden * (act + in));
}

/* The dense times cached per T, to be computed again. */
static void forget_dense(strata_serve_cost *c)
{
    for (uint32_t t = 0; t <= 2 * c->max_tokens + 1; t++)
        c->dense[t] = NAN;
}

strata_serve_cost *strata_serve_cost_new(const strata_hw *hw, const strata_serve_model *m, uint32_t tp,
                                         bool attention_dp, uint32_t max_tokens, GError **err)
{
    strata_serve_cost *c = g_new0(strata_serve_cost, 1);
    c->hw = hw;
    c->m = *m;
    strata_serve_model_shape(m, &c->s);
    c->moe_layers = strata_model_moe_layers(&c->s); /* closed form: a config may declare 2^31 - 1 layers */
    c->tp = tp ? tp : 1;
    c->dp = attention_dp ? c->tp : 1;
    c->attn_tp = attention_dp ? 1 : c->tp;
    c->unit = STRATA_SERVE_UNIT;
    c->mem_bw = strata_hw_memory(hw, strata_hw_compute(hw, 0)->operands)->bandwidth;
    c->gemm = strata_kernel_find("gemm");
    c->grouped = strata_kernel_find("grouped-gemm");
    c->flash = strata_kernel_find("flash-attention");
    c->elementwise = strata_kernel_find("elementwise");
    c->max_tokens = max_tokens;
    if (!c->gemm || !c->grouped || !c->flash || !c->elementwise ||
        !strata_serve_links_find(hw, c->unit, c->tp, &c->links, err) ||
        !strata_serve_coll_check_tuned(hw, c->tp, c->dp > 1, err)) {
        if (err && !*err)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "kernel table lacks gemm/grouped-gemm/flash-attention");
        g_free(c);
        return NULL;
    }
    c->dense = g_new(double, 2 * ((gsize)max_tokens + 1));
    forget_dense(c);
    c->coll = c->tp > 1 ? strata_serve_coll_new(hw, c->tp) : NULL;
    c->coll_owned = true;
    return c;
}

void strata_serve_cost_set_collectives(strata_serve_cost *c, strata_serve_coll *coll)
{
    if (c->coll_owned)
        strata_serve_coll_free(c->coll);
    c->coll = c->tp > 1 ? coll : NULL;
    c->coll_owned = false;
    forget_dense(c); /* they hold the collectives */
}

void strata_serve_cost_set_decode(strata_serve_cost *c, const strata_serve_decode_kernel *k) { c->decode = k; }
void strata_serve_cost_set_sustained(strata_serve_cost *c, const strata_hw *s) { c->sustained = s; forget_dense(c); }
void strata_serve_cost_set_fa3_prefill(strata_serve_cost *c, bool on) { c->fa3_prefill = on; }
void strata_serve_cost_set_fa2_attention(strata_serve_cost *c, bool on) { c->fa2 = on; }
void strata_serve_cost_set_triton_moe(strata_serve_cost *c, bool on, const strata_serve_triton_moe_configs *cfg)
{ c->triton_moe = on; c->moe_cfg = cfg; forget_dense(c); }
void strata_serve_cost_set_fused_moe_bf16(strata_serve_cost *c, const strata_serve_fused_moe_bf16 *r)
{ c->bf16_moe = strata_serve_dtype_bytes(c->m.dtype) >= 2 ? r : NULL; forget_dense(c); } /* unquantized only */
void strata_serve_cost_set_triton_gemm(strata_serve_cost *c, const strata_serve_triton_gemm *g)
{
    /* gfx942 only (MI300X/MI325X: 304 CUs); gfx950 (MI355X, 256) takes per-(N,K) MI350X configs, not ported */
    c->block_gemm = g && strata_hw_compute(c->hw, c->unit)->kernel.sms == 304 ? g : NULL;
    forget_dense(c);
}
void strata_serve_cost_set_fp8_linear(strata_serve_cost *c, const strata_serve_fp8_linear *r)
{ c->fp8_lin = c->m.dtype == STRATA_DTYPE_F8 && !c->m.weight_block ? r : NULL; forget_dense(c); } /* per-tensor FP8 */
void strata_serve_cost_set_attn_aux(strata_serve_cost *c, const strata_serve_attn_aux *a) { c->aux = a; }
void strata_serve_cost_set_sampler(strata_serve_cost *c, const strata_serve_sampler *s) { c->sampler = s; }
void strata_serve_cost_set_moe_gate(strata_serve_cost *c, const strata_serve_moe_gate *g)
{ c->gate = g; forget_dense(c); }
void strata_serve_cost_set_mla_kernels(strata_serve_cost *c, const strata_serve_mla_kernels *k) { c->mla_k = k; }
void strata_serve_cost_set_mla_absorb(strata_serve_cost *c, bool on) { c->mla_absorb = c->pad_v = on; forget_dense(c); }
void strata_serve_cost_set_mla_prefill_v1(strata_serve_cost *c, bool on) { c->mla_v1 = on; }
void strata_serve_cost_set_mla_pad_v(strata_serve_cost *c, bool on) { c->pad_v = (c->mla_absorb || c->mla_v1) && on; }
void strata_serve_cost_set_allreduce(strata_serve_cost *c, const strata_serve_allreduce *a)
{ c->ar = a; forget_dense(c); } /* they hold the all-reduces */
void strata_serve_cost_set_vocab_collectives(strata_serve_cost *c, bool gather_logits, bool to_root,
                                             bool embed_allreduce)
{
    c->logits_to_root = to_root, c->gather_logits = gather_logits;
    c->embed_allreduce = embed_allreduce;
}

void strata_serve_cost_free(strata_serve_cost *c)
{
    if (!c)
        return;
    if (c->coll_owned)
        strata_serve_coll_free(c->coll);
    g_free(c->dense);
    g_free(c);
}

/* A gated (three matrices) or plain (two) MLP of width w on t tokens. */
static double mlp_pair(const strata_serve_cost *c, uint64_t t, uint64_t w)
{
    uint64_t up = (c->s.gated ? 2 : 1) * w;
    return linear(c, t, c->m.hidden, up) + linear(c, t, w, c->m.hidden);
}

static uint64_t local_tokens(const strata_serve_cost *c, uint64_t t)
{
    return (t + c->dp - 1) / c->dp;
}

/* Before the experts, on the lt tokens this rank routes (its own under attention DP, before fused_moe_cutlass.py's
 * all-gather): the routing kernel (renorm_moe_routing_op: reads lt x experts logits, writes lt x top_k ids and scales),
 * the engine's gate kernels beyond it (serve_moe_gate.h), with 8-bit weights the input's FP8 quantization. */
static double route_and_quantize(const strata_serve_cost *c, uint64_t lt)
{
    double in = strata_serve_dtype_bytes(c->m.dtype), act = act_bytes(c), t = (double)lt;
    double route = stream_pass(c, lt * c->m.experts, t * (double)c->m.experts * act + t * c->m.top_k * 8.0) +
                   strata_serve_moe_gate_extra_s(c->gate, &c->m, lt, pass_cb, c);
    return route + (in < act ? stream_pass(c, lt * c->m.hidden, t * (double)c->m.hidden * (act + in)) : 0);
}

/* TensorRT-LLM's expert maps of t tokens' routed rows, one kernel a pass
 * (serve_moe_route.h strata_serve_expert_map_passes). */
static double expert_maps(const strata_serve_cost *c, uint64_t t)
{
    strata_serve_route_pass p[3];
    uint32_t n = strata_serve_expert_map_passes(t, c->m.top_k, c->m.experts, p);
    double time = 0;
    for (uint32_t i = 0; i < n; i++)
        time += stream_pass(c, p[i].elements, p[i].bytes);
    return time;
}

/* One per-token-group FP8 quantization of a t x k input before a block-scaled linear (weight_block > 0;
 * serve_moe_route.h strata_serve_block_quant_bytes): one kernel; 0 otherwise. */
static double block_quant(const strata_serve_cost *c, uint64_t t, uint64_t k)
{
    double b =
        strata_serve_block_quant_bytes(t, k, c->m.weight_block, act_bytes(c), strata_serve_dtype_bytes(c->m.dtype));
    return b > 0 ? stream_pass(c, t * k, b) : 0;
}

/* block_quant before a GQA layer's o_proj or a dense MLP's down_proj, or there with fp8_lin's every_linear a
 * per-tensor one (serve_fp8_linear.h: Llama's four Linears; not MLA's or shared experts', which no row read). */
static double linear_quant(const strata_serve_cost *c, uint64_t t, uint64_t k)
{
    if (!c->fp8_lin || !c->fp8_lin->every_linear || !t || !k)
        return block_quant(c, t, k);
    return stream_pass(c, t * k, strata_serve_fp8_linear_quant_bytes(t, k, act_bytes(c)));
}

/* The routed experts of an MoE layer on t tokens (every rank's under attention DP), kernel by kernel as TensorRT-LLM's
 * CUTLASS fused MoE runs them: the seven kernels and their bytes are listed, with their sources, in serve_moe_route.h
 * ("The routed experts' kernels"). routed = t x top_k over active experts: min(experts, routed) (balanced routing,
 * aiconfigurator's), or in a served step (routed_by_router) the experts a router reaches (strata_serve_routed_experts,
 * plus fused shared ones); per = ceil(routed / active). Served with block-scaled FP8 weights the activation writes
 * bf16 and gemm2's input is quantized by a kernel of its own (block_quant). */
static double experts_grouped(const strata_serve_cost *c, uint64_t t, uint64_t w, bool routed_by_router)
{
    const strata_serve_fused_moe_bf16 *f = routed_by_router ? c->bf16_moe : NULL; /* unquantized (its setter) */
    uint32_t fs = strata_serve_fused_moe_bf16_shared(f, &c->m); /* shared experts fused in: one more row a token */
    uint64_t up = (c->s.gated ? 2 : 1) * w, h = c->m.hidden, k = c->m.top_k + fs, routed = t * k;
    uint64_t active = routed_by_router ? strata_serve_routed_experts(c->m.experts, k - fs, t) + fs
                                       : (routed < c->m.experts ? routed : c->m.experts);
    if (!active)
        return 0;
    uint64_t per = (routed + active - 1) / active;
    bool split = routed_by_router && c->m.weight_block > 0;
    double in = strata_serve_dtype_bytes(c->m.dtype), act = act_bytes(c), r = (double)routed, hh = (double)h;
    double pre = expert_maps(c, t) + stream_pass(c, routed * h, 2.0 * r * hh * in + 12.0 * r) +
                 stream_pass(c, active, (double)active * 64.0);
    double activation = stream_pass(c, routed * w, r * ((double)up * act + (double)w * (split ? act : in))) +
                        (split ? block_quant(c, routed, w) : 0);
    double combine = stream_pass(c, t * h, (r + (double)t) * hh * act + 12.0 * r);
    if (split && c->triton_moe)
        return pre + triton_gemm(c, t, active, per, h, up) + activation + triton_gemm(c, t, active, per, w, h) +
               combine;
    strata_serve_fused_moe_gemm g = strata_serve_fused_moe_bf16_gemm(c->hw, c->unit, t, c->m.experts + fs, w, routed,
                                                                     active); /* serve_cost.h */
    return pre + strata_serve_fused_moe_bf16_s(f, grouped_gemm(c, active, per, h, up), &g, h, up) + activation +
           strata_serve_fused_moe_bf16_s(f, grouped_gemm(c, active, per, w, h), &g, w, h) + combine;
}

double strata_serve_cost_moe_experts(strata_serve_cost *c, uint64_t tokens, strata_serve_work *work)
{
    if (work)
        *work = (strata_serve_work){0};
    c->work = work;
    double t = 0;
    if (c->s.moe_ffn > 0 && c->m.experts && tokens)
        t = route_and_quantize(c, tokens) + experts_grouped(c, tokens, (uint64_t)c->s.moe_ffn / c->tp, false);
    c->work = NULL;
    return t;
}

/* One MoE layer's MLP on a step's t tokens: the router GEMM and route_and_quantize on the rank's own tokens (all t
 * without attention DP), the routed experts on all t (experts_grouped), and the shared experts every token goes
 * through (one MLP shared_experts x wide, as vLLM's DeepseekV2MoE and Llama4MoE build them; whole on a rank's own
 * tokens under attention DP, overridden_tp_size=1 in TensorRT-LLM's Qwen3 and Llama 4 MoE modules, else split over
 * tp), with its activation (vLLM's DeepseekV2MLP and Llama4's shared_expert run SiluAndMul between gate_up_proj and
 * down_proj) and, under block-scaled FP8, its two linears' input quantizations (block_quant:
 * apply_w8a8_block_fp8_linear quantizes each linear's input). The routed experts reach the experts a router picks
 * (experts_grouped, routed_by_router); shared experts an engine fuses into them run there (serve_fused_moe_bf16.h). */
static double moe_time(const strata_serve_cost *c, uint64_t t)
{
    const strata_serve_model *m = &c->m;
    uint64_t w = (uint64_t)c->s.moe_ffn / c->tp, lt = local_tokens(c, t);
    uint32_t apart = c->s.shared_experts - strata_serve_fused_moe_bf16_shared(c->bf16_moe, m); /* not fused in */
    uint64_t shared_w = (uint64_t)apart * (c->dp > 1 ? (uint64_t)c->s.moe_ffn : w);
    double shared = apart ? mlp_pair(c, lt, shared_w) + mlp_activation(c, lt, shared_w) +
                                block_quant(c, lt, m->hidden) + block_quant(c, lt, shared_w)
                          : 0;
    /* the router's GEMM: the gemm row (DeepSeek's MoEGate weight is bf16, no block-FP8 Linear) */
    return gemm(c, lt, m->hidden, m->experts) + route_and_quantize(c, lt) + experts_grouped(c, t, w, true) + shared;
}

/* All layers' MLPs: the dense ones', then the MoE ones'. */
static double mlp_time(const strata_serve_cost *c, uint64_t t)
{
    uint32_t n_moe = c->moe_layers;
    double dense = c->dp > 1 ? mlp_pair(c, local_tokens(c, t), (uint64_t)c->m.intermediate)
                             : mlp_pair(c, t, (uint64_t)c->m.intermediate / c->tp);
    return (c->m.layers - n_moe) * dense + (n_moe ? n_moe * moe_time(c, t) : 0);
}

/* A collective of `kind` over the tp ranks of one node, in_bytes of IN on each rank (an all-gather's share, an
 * all-reduce's or a reduce-scatter's whole buffer), as strata's collective model simulates it (serve_coll.h
 * strata_serve_coll_charge). */
static double collective(const strata_serve_cost *c, strata_op_kind kind, uint64_t in_bytes)
{
    if (c->tp < 2 || !in_bytes || c->links.ar_bw <= 0 || !c->coll)
        return 0;
    return strata_serve_coll_charge(c->coll, kind, in_bytes, c->links.ar_bw, c->links.ar_lat);
}

bool strata_serve_cost_check_collectives(strata_serve_cost *c, GError **err)
{
    return c->tp < 2 || !c->coll || /* the logits' all-gather not sent to the root (vocab_collectives) */
           strata_serve_coll_check(c->coll, c->dp > 1, c->gather_logits && !c->logits_to_root, err);
}

/* An all-reduce of `bytes` a rank, t rows: the engine's kernel (serve_allreduce.h) where it runs its own, else NCCL's.
 * allreduce_as: of the t rows' bf16 activations (an FP8 model's too: the row-parallel GEMM writes bf16). */
static double allreduce_bytes(const strata_serve_cost *c, uint64_t t, uint64_t bytes, bool eager)
{
    if (c->ar && c->tp > 1 && bytes) {
        const strata_compute_spec *u = strata_hw_compute(c->hw, c->unit);
        double eff = u->kernel.stream_efficiency > 0 ? u->kernel.stream_efficiency : 1.0;
        strata_serve_ar_in in = {c->tp,           t,
                                 bytes,           u->kernel.kernel_launch,
                                 c->links.ar_bw,  c->links.ar_lat,
                                 c->mem_bw * eff, eager,
                                 c->links.ar_peers_per_link};
        strata_serve_ar_plan p = strata_serve_allreduce_plan(c->ar, &in);
        if (p.strategy != SERVE_AR_NCCL)
            return p.time_s;
    }
    return collective(c, STRATA_OP_ALL_REDUCE, bytes);
}
static double allreduce_as(const strata_serve_cost *c, uint64_t t, bool eager)
{
    return allreduce_bytes(c, t, (uint64_t)((double)t * c->m.hidden * act_bytes(c)), eager);
}

/* Whether the step's all-reduce of t rows runs the engine's own kernel
 * with the norm and quantization in it (serve_allreduce.h fuses_norm). */
static bool allreduce_fuses_norm(const strata_serve_cost *c, uint64_t t)
{
    uint64_t bytes = (uint64_t)((double)t * c->m.hidden * act_bytes(c));
    if (!c->ar || c->tp < 2 || !bytes)
        return false;
    strata_serve_ar_in in = {c->tp,      t,     bytes, 0, c->links.ar_bw, c->links.ar_lat,
                             c->mem_bw, false, c->links.ar_peers_per_link};
    return strata_serve_allreduce_plan(c->ar, &in).fuses_norm;
}

/* The all-reduce of a step in a CUDA graph (dense_time's, cached per T). */
static double allreduce(const strata_serve_cost *c, uint64_t t)
{
    return allreduce_as(c, t, false);
}

double strata_serve_cost_allreduce(const strata_serve_cost *c, uint64_t tokens)
{
    return c->dp > 1 ? 0 : allreduce(c, tokens);
}

double strata_serve_cost_eager_extra(const strata_serve_cost *c, uint64_t tokens)
{
    if (c->dp > 1 || !c->ar || c->tp < 2 || !tokens)
        return 0;
    return 2.0 * c->m.layers * (allreduce_as(c, tokens, true) - allreduce_as(c, tokens, false));
}

/* Under attention DP, around each MoE layer (fused_moe_cutlass.py): an all-gather of every rank's input in the GEMMs'
 * dtype (FP8 under 8-bit weights, quantized before it) with its top_k ids and scales (8 bytes each), and a
 * reduce-scatter of the bf16 output; NCCL's buffers are equal per rank, each rank's share of t tokens rounded up
 * (local_tokens). */
static double moe_collectives(const strata_serve_cost *c, uint64_t t)
{
    double lt = (double)local_tokens(c, t), h = c->m.hidden;
    double gather_in = lt * (h * strata_serve_dtype_bytes(c->m.dtype) + c->m.top_k * 8.0);
    return collective(c, STRATA_OP_ALL_GATHER, (uint64_t)gather_in) +
           collective(c, STRATA_OP_REDUCE_SCATTER, (uint64_t)(lt * h * act_bytes(c)) * c->tp);
}

/* The query heads of a rank's attention (at least one). */
static uint64_t q_heads_per_rank(const strata_serve_cost *c)
{
    return c->m.heads / c->attn_tp ? c->m.heads / c->attn_tp : 1;
}

/* Of a step's t tokens, d of them decodes, those an MLA model runs through vLLM V0's absorbed weights (serve_cost.h
 * strata_serve_cost_set_mla_absorb): every decode, where the query has its latent (q_lora_rank); none under DP. */
static uint64_t absorbed(const strata_serve_cost *c, uint64_t t, uint64_t d)
{
    return c->mla_absorb && c->dp == 1 && c->s.kv_lora_rank > 0 && c->s.q_lora_rank > 0 ? (d < t ? d : t) : 0;
}

/* One layer's attention projections on t tokens: GQA's QKV and O; MLA's down-projections (replicated on every rank,
 * as vLLM's fused_qkv_a_proj), their norms, the query's up-projection q_b and O; the `a` absorbed decodes
 * (absorbed()) through W_Q_UK (q_lora x heads kv_lora, block-FP8), W_QR (q_lora x heads rope, bf16:
 * bf16_weight_gemm) and W_UV_O (heads kv_lora x hidden, block-FP8, its input quantized per token group) instead. */
static double projections(const strata_serve_cost *c, uint64_t t, uint64_t a)
{
    const strata_model_shape *s = &c->s;
    const strata_serve_model *m = &c->m;
    uint64_t heads = q_heads_per_rank(c);
    if (s->kv_lora_rank <= 0) {
        uint64_t kvr = strata_serve_kv_heads_per_rank(m, c->attn_tp);
        uint64_t qkv = ((uint64_t)m->heads / c->attn_tp + 2 * kvr) * m->head_dim;
        uint64_t o_in = (uint64_t)m->heads / c->attn_tp * m->head_dim;
        return linear(c, t, m->hidden, qkv) + linear(c, t, o_in, m->hidden) + linear_quant(c, t, o_in);
    }
    uint64_t lq = (uint64_t)s->q_lora_rank, lkv = (uint64_t)s->kv_lora_rank, r = (uint64_t)s->qk_rope_head_dim;
    uint64_t qk = (uint64_t)(s->qk_nope_head_dim + s->qk_rope_head_dim), v = (uint64_t)s->v_head_dim;
    uint64_t e = t - a; /* the tokens through q_b and o_proj */
    double down = lq ? linear(c, t, m->hidden, lq + lkv + r) + linear(c, e, lq, heads * qk)
                     : linear(c, t, m->hidden, heads * qk) + linear(c, t, m->hidden, lkv + r);
    double folded = a ? linear(c, a, lq, heads * lkv) + bf16_weight_gemm(c, a, lq, heads * r, false) +
                            linear(c, a, heads * lkv, m->hidden) + block_quant(c, a, heads * lkv)
                      : 0;
    return down + elementwise(c, t * (lq + lkv)) + linear(c, e, heads * v, m->hidden) + block_quant(c, t, lq) +
           block_quant(c, e, heads * v) + folded + (c->mla_absorb ? strata_serve_mla_v07_a_proj_extra_s(linear_cb, c,
           c->hw, c->unit, e, m->hidden, lq, lkv + r, block_quant(c, e, m->hidden), m->weight_block, c->work) : 0);
}

/* Under attention data parallelism, each rank's share: its own tokens through the attention projections, norms and the
 * dense layers' activation, all tokens through the MLPs' sharded part; a gather and a reduce-scatter around each MoE
 * layer (moe_collectives); no all-reduce around attention or the dense MLPs (their weights are whole). An MoE layer
 * has no dense MLP and no activation over `intermediate`. */
static double dense_time_dp(strata_serve_cost *c, uint32_t t)
{
    const strata_serve_model *m = &c->m;
    uint64_t lt = local_tokens(c, t);
    double layer = projections(c, lt, 0) + elementwise(c, 4ull * lt * m->hidden) + fp8_input_quant(c, lt, true);
    double dense_act = mlp_activation(c, lt, m->intermediate) + fp8_input_quant(c, lt, false) +
                       linear_quant(c, lt, m->intermediate);
    double total = layer * m->layers + (m->layers - c->moe_layers) * dense_act + mlp_time(c, t) +
                   c->moe_layers * moe_collectives(c, t);
    if (t <= c->max_tokens)
        c->dense[t] = total;
    return total;
}

/* Everything of a step but attention and the LM head, for T tokens, d of them decodes. */
static double dense_time(strata_serve_cost *c, uint32_t t, uint64_t d)
{
    uint64_t a = absorbed(c, t, d);
    double *cache = !a ? c->dense : a == t ? c->dense + c->max_tokens + 1 : NULL; /* a mixed step: not cached */
    if (!c->work && cache && t <= c->max_tokens && !isnan(cache[t])) /* a work count runs every op */
        return cache[t];
    const strata_serve_model *m = &c->m;
    if (c->dp > 1)
        return dense_time_dp(c, t);
    double layer = projections(c, t, a) + elementwise(c, 4ull * t * m->hidden) + 2 * allreduce(c, t) +
                   fp8_input_quant(c, t, true);
    /* the dense MLPs' activation and their FP8 input */
    double dense_act = mlp_activation(c, t, (uint64_t)m->intermediate / c->tp) + fp8_input_quant(c, t, false) +
                       linear_quant(c, t, (uint64_t)m->intermediate / c->tp);
    double total = layer * m->layers + (m->layers - c->moe_layers) * dense_act + mlp_time(c, t);
    if (cache && t <= c->max_tokens)
        cache[t] = total;
    return total;
}

/* MLA's attention in one layer as vLLM's MLA backend runs it (vllm/v1/attention/backends/mla/common.py): a prefill
 * chunk in the expanded form, kv_b up-projecting its whole context (Skv x kv_lora x heads (nope + v)) and an MHA of
 * q/k width nope + rope and v width v (one flash op of head width (qk + v) / 2: the same products and bytes; qk where
 * v is padded; the kernels around it V0's serve_mla_prefill_v07.h and V1's serve_mla_prefill_v1.h); the
 * decodes with absorbed weights: q_nope times W_UK (T x nope x heads kv_lora, a bmm of one product per head), an MQA
 * over the latent cache (the heads as query rows of one KV head, q/k width kv_lora + rope, v width kv_lora: head
 * width (2 kv_lora + rope) / 2 for the products; the bytes are the latent read once per token, K and V alike, and q
 * and o), then times W_UV (T x kv_lora x heads v); under V0's absorbed weights the two bmms are the projections'. */
static double mla_prefill(const strata_serve_cost *c, const strata_serve_chunk *ch, uint64_t heads, strata_dtype kv)
{
    const strata_model_shape *s = &c->s;
    uint64_t nope = (uint64_t)s->qk_nope_head_dim, r = (uint64_t)s->qk_rope_head_dim, v = (uint64_t)s->v_head_dim;
    uint64_t d[6] = {1, heads, ch->tokens, ch->context, (nope + r + (c->pad_v ? nope + r : v)) / 2, heads};
    return linear(c, ch->context, (uint64_t)s->kv_lora_rank, heads * (nope + v)) + op_time(c, c->flash, kv, d, 6, 1) +
           (c->mla_absorb ? strata_serve_mla_v07_prefill_passes_s(pass_cb, c, ch->tokens, ch->context, heads, nope, r,
                                                                  v, act_bytes(c), c->pad_v) : 0); /* v07.h */
}

static double mla_decode(const strata_serve_cost *c, uint64_t decodes, uint64_t mean, uint64_t heads, strata_dtype kv)
{
    const strata_model_shape *s = &c->s;
    uint64_t lkv = (uint64_t)s->kv_lora_rank, r = (uint64_t)s->qk_rope_head_dim;
    uint64_t d[6] = {decodes, 1, heads, mean, (2 * lkv + r) / 2, 1};
    double bytes = (double)decodes * ((double)mean * (double)(lkv + r) * strata_serve_dtype_bytes(kv) +
                                      (double)heads * (double)(2 * lkv + r) * strata_serve_dtype_bytes(c->m.dtype));
    if (absorbed(c, decodes, decodes)) /* W_UK and W_UV folded into the projections' weights (projections) */
        return op_time_bytes(c, c->flash, kv, d, 6, false, bytes);
    return bgemm(c, heads, decodes, (uint64_t)s->qk_nope_head_dim, lkv) +
           op_time_bytes(c, c->flash, kv, d, 6, false, bytes) + bgemm(c, heads, decodes, lkv, (uint64_t)s->v_head_dim);
}

/* GQA/MHA: one flash op per prefill chunk (causal), one for all decodes (a KV group's query heads packed as rows, Skv
 * their mean context), or the engine's decode kernel (serve_decode.h: the mean context and the longest, which sets
 * XQA's multi-block count). */
/* A prefill chunk's HBM bytes as FlashAttention-3 (vLLM's FLASH_ATTN backend on Hopper) moves them: its tile
 * schedulers order the tiles in "sections" of heads whose K and V fit 32 MB of L2 (hopper/ tile_scheduler.hpp,
 * DynamicPersistentTileScheduler:: to_underlying_arguments: size_l2 = 32 MB, swizzle = size_l2 / size_one_kv_head,
 * times qhead_per_khead without PackGQA; the varlen scheduler vLLM calls keeps num_nheads_in_l2 heads together
 * likewise), so each KV head's K and V come from HBM once for all its query heads and query blocks, where one head's K
 * and V (Skv x 2 D in the cache's dtype) fit those 32 MB: Q read once in the attention's dtype (vLLM quantizes it to
 * the cache's FP8, flash_attn.py FlashAttentionImpl.forward's q_descale), O written once in the activations'. Where
 * one head does not fit, or under an engine that runs another prefill kernel: the kernel row's own count (K and V once
 * per block pair and query head). */
enum { FA3_L2_SECTION_BYTES = 32 * 1024 * 1024 };

static double fa3_prefill_bytes(const strata_serve_cost *c, const strata_serve_chunk *ch, uint64_t heads,
                                uint64_t kv_heads, strata_dtype kv, uint64_t window)
{
    double e = strata_serve_dtype_bytes(kv), d = (double)c->m.head_dim;
    /* under a window the chunk's queries (positions context - tokens ..
     * context - 1) see keys from context - tokens - window + 1 on: at most
     * tokens + window - 1 of them */
    uint64_t keys = window && ch->tokens + window - 1 < ch->context ? ch->tokens + window - 1 : ch->context;
    double one_head = (double)keys * 2.0 * d * e;
    if (one_head > FA3_L2_SECTION_BYTES)
        return 0;
    return (double)ch->tokens * (double)heads * d * (e + act_bytes(c)) + (double)kv_heads * one_head;
}

/* window > 0: a sliding layer's chunk, the flash row's causal band (mask=window-W: its block pairs, products and K/V
 * reads within the band), as FlashAttention runs it with window_size = (W - 1, 0) (vLLM v1
 * vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl: sliding_window = (sliding_window - 1, 0)). */
static double gqa_prefill(const strata_serve_cost *c, const strata_serve_chunk *ch, uint64_t heads, strata_dtype kv,
                          uint64_t window)
{
    uint64_t kvr = strata_serve_kv_heads_per_rank(&c->m, c->attn_tp);
    uint64_t d[6] = {1, heads, ch->tokens, ch->context, c->m.head_dim, kvr};
    uint64_t band = window < ch->context ? window : 0; /* a window of the whole context is causal */
    double bytes = c->fa3_prefill ? fa3_prefill_bytes(c, ch, heads, kvr, kv, band) : 0;
    return op_time_masked(c, c->flash, kv, d, 6, true, band, bytes);
}

static double gqa_decode(const strata_serve_cost *c, uint64_t decodes, uint64_t mean, uint64_t longest, uint64_t heads,
                         strata_dtype kv)
{
    uint64_t kvr = strata_serve_kv_heads_per_rank(&c->m, c->attn_tp), group = heads / kvr ? heads / kvr : 1;
    uint64_t d[6] = {decodes, kvr, group, mean, c->m.head_dim, kvr};
    if (strata_serve_decode_is_flash(c->decode) && fa2_runs(c, kv)) { /* FA2 swaps the group into rows itself */
        uint64_t q[6] = {decodes, kvr * group, 1, mean, c->m.head_dim, kvr};
        return op_time(c, c->flash, kv, q, 6, false);
    }
    if (strata_serve_decode_is_flash(c->decode))
        return op_time(c, c->flash, kv, d, 6, false);
    strata_serve_decode_in in = {decodes, mean, longest, kvr, group, c->m.head_dim, strata_serve_dtype_bytes(kv),
                                 act_bytes(c)};
    if (c->work) { /* the flash op's nominal counts: the same products and operands */
        strata_kernel_cost kc = {0};
        kernel_cost(c, c->flash, kv, d, 6, false, 0, 0, &kc);
    }
    return strata_serve_decode_time(c->decode, c->hw, c->unit, &in, NULL);
}

/* Before a step's prefill attention (GQA/MHA), one kernel over its p prefill tokens on this rank: TensorRT-LLM's QKV
 * preprocessing (invokeQKVPreprocessing, run by AttentionOp::enqueueContext in cpp/tensorrt_llm/common/attentionOp.cpp:
 * RoPE applied to q and k, k and v written into the paged cache, q written for the context FMHA), as vLLM's
 * rotary_embedding and reshape_and_cache do in two: q, k and v read in the activations' dtype, written in the
 * attention's (the cache's: FP8 under TensorRT-LLM's FP8 context FMHA, mFP8ContextFMHA). A decode's q, k and v are
 * left to the decode attention. */
static double qkv_preprocess(const strata_serve_cost *c, uint64_t p, uint64_t heads, strata_dtype kv)
{
    uint64_t kvr = strata_serve_kv_heads_per_rank(&c->m, c->attn_tp), n = p * (heads + 2 * kvr) * c->m.head_dim;
    return n ? stream_pass(c, n, (double)n * (act_bytes(c) + strata_serve_dtype_bytes(kv))) : 0;
}

/* The engine's own kernels around a layer's GQA attention
 * (serve_attn_aux.h), in place of qkv_preprocess: each pass one kernel
 * over the step's p prefill and d decode tokens on this rank, whose prefill contexts sum to `contexts`. */
static double aux_passes(const strata_serve_cost *c, uint64_t p, uint64_t d, uint64_t contexts, uint64_t heads,
                         strata_dtype kv)
{
    uint64_t kvr = strata_serve_kv_heads_per_rank(&c->m, c->attn_tp);
    double t = 0;
    for (uint32_t i = 0; i < c->aux->n_passes; i++) {
        strata_serve_aux_cost a = strata_serve_attn_aux_pass(c->aux, i, p, d, contexts, heads, kvr, c->m.head_dim,
                                                             act_bytes(c), strata_serve_dtype_bytes(kv));
        if (a.elements)
            t += stream_pass(c, a.elements, a.bytes);
    }
    return t;
}

/* The q and k norms of a model with them, t tokens of a step on this rank (serve_qk_norm.h), all-reduces in a graph. */
static double qk_ar_cb(const void *c, uint64_t t, uint64_t bytes) { return allreduce_bytes(c, t, bytes, false); }
static double qk_norm_pass(const strata_serve_cost *c, uint64_t t)
{
    uint64_t hd = c->m.head_dim, k = strata_serve_kv_heads_per_rank(&c->m, c->attn_tp) * hd;
    strata_serve_qk_norm_in in = {t, q_heads_per_rank(c) * hd, k, act_bytes(c), c->m.qk_norm_tp, c->attn_tp};
    return c->m.qk_norm ? strata_serve_qk_norm_time(&in, pass_cb, qk_ar_cb, c) : 0;
}

/* One layer's attention over a step's chunks and pad dummy decodes of context 1: each prefill chunk (after GQA's
 * qkv_preprocess, or the engine's own kernels around it: aux_passes), then the decodes together, MLA's way or GQA's.
 * The q/k norms run before the attention op (qk_norm_pass, counted by the step). window > 0: a sliding-window layer
 * (issue 45): a decode reads the K and V of its last min(context, window) tokens (FlashAttention's window_size = (W -
 * 1, 0) in vLLM v1's flash_attn.py; every engine's decode kernel reads only the window), so its context is
 * min(context, window) for the mean and the longest; a GQA prefill chunk covers the causal band (gqa_prefill). MLA
 * prefill and the auxiliary kernels (RoPE, cache writes) keep the whole context: no MLA model has a window, and the
 * aux kernels touch only the step's own tokens. */
static double attention(const strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n, uint32_t pad,
                        uint64_t window)
{
    bool mla = c->s.kv_lora_rank > 0;
    uint64_t heads = q_heads_per_rank(c), decodes = pad, ctx = pad, longest = 1;
    strata_dtype kv = c->m.kv_dtype ? c->m.kv_dtype : c->m.dtype;
    double t = 0;
    uint64_t prefill = 0, contexts = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (chunks[i].tokens == 1) {
            decodes++;
            uint64_t keys = window && chunks[i].context > window ? window : chunks[i].context;
            ctx += keys;
            longest = keys > longest ? keys : longest;
        } else {
            t += mla ? mla_prefill(c, &chunks[i], heads, kv) : gqa_prefill(c, &chunks[i], heads, kv, window);
            prefill += chunks[i].tokens;
            contexts += chunks[i].context;
        }
    }
    if (mla && c->mla_v1) /* V1's kernels around its flash calls, once over the step's prefills (batched; v1.h) */
        t += strata_serve_mla_v1_step_s(pass_cb, c, &c->s, prefill, contexts, heads, act_bytes(c),
                                        strata_serve_dtype_bytes(kv), c->pad_v, !strata_hw_rocm(c->hw));
    if (c->dp > 1) /* a rank's share: its prefill chunks, its decodes */
        t /= c->dp;
    if (!mla && c->aux)
        t += aux_passes(c, local_tokens(c, prefill), local_tokens(c, decodes), contexts, heads, kv);
    else if (!mla)
        t += qkv_preprocess(c, local_tokens(c, prefill), heads, kv);
    if (decodes) {
        uint64_t mean = (ctx + decodes - 1) / decodes;
        decodes = local_tokens(c, decodes);
        t += mla ? mla_decode(c, decodes, mean, heads, kv) : gqa_decode(c, decodes, mean, longest, heads, kv);
    }
    return t;
}

/* The collectives joining the vocabulary split over tp ranks (no attention DP), where the engine runs them
 * (serve_cost.h): the sampled rows' logits all-gathered, each rank's ceil(vocab / tp) columns in the activations' dtype
 * (TensorRT-LLM's LMHead keeps config.torch_dtype, bf16 under FP8 weights); the step's tokens x hidden embedding rows
 * all-reduced by the engine's all-reduce. */
static double vocab_collectives(const strata_serve_cost *c, uint64_t tokens, uint64_t sampled)
{
    if (c->tp < 2 || c->dp > 1)
        return 0;
    uint64_t cols = ((uint64_t)c->m.vocab + c->tp - 1) / c->tp;
    uint64_t share = (uint64_t)((double)(sampled * cols) * act_bytes(c));
    double t = 0;
    /* to root: torch/csrc/cuda/nccl.cpp gather, one group of the root's ncclRecv from each rank: the tp - 1
     * shares into the root, as many one after another on a link as the most peers' routes share one
     * (ar_peers_per_link: tp - 1 through a switch port, 1 on a full mesh), at SM stores' 4/5 of the wire
     * (coll_sched.h), one latency (NCCL's per-call cost not in) */
    if (c->gather_logits && sampled && c->logits_to_root && c->links.ar_bw > 0) {
        double k = strata_serve_ar_peers_per_link(c->links.ar_peers_per_link, c->tp);
        t += k * (double)share * STRATA_COLL_WIRE_NUM / STRATA_COLL_WIRE_DEN / c->links.ar_bw + c->links.ar_lat;
    }
    else if (c->gather_logits && sampled)
        t += collective(c, STRATA_OP_ALL_GATHER, share);
    if (c->embed_allreduce && tokens)
        t += allreduce(c, tokens);
    return t;
}

/* pass_cb (after stream_pass): stream_pass as the tables take it (serve_pass.h). sampler_time: the decoder's
 * kernels (serve_sampler.h) over `rows` sampled rows of the whole vocabulary on one rank. */
static double sampler_time(const strata_serve_cost *c, uint64_t rows)
{
    return strata_serve_sampler_time(c->sampler, rows, c->m.vocab, pass_cb, c);
}

/* An MLA step under the engine's row (serve_mla_kernels.h): GPU time `gpu` plus the row's kernels on the rank's
 * decode tokens (the absorbed path; none without decodes), or the host's eager chain where that is longer. */
static double mla_step(const strata_serve_cost *c, double gpu, uint64_t decodes)
{
    const strata_model_shape *s = &c->s;
    if (!c->mla_k || s->kv_lora_rank <= 0 || !decodes)
        return gpu;
    strata_serve_mla_shape sh = {c->m.layers, c->moe_layers, c->m.hidden, (uint64_t)s->kv_lora_rank,
                                 (uint64_t)s->qk_rope_head_dim, q_heads_per_rank(c), (uint64_t)s->v_head_dim,
                                 c->m.experts, act_bytes(c), (uint64_t)s->qk_nope_head_dim, c->m.weight_block > 0};
    gpu += strata_serve_mla_kernels_time(c->mla_k, &sh, local_tokens(c, decodes), pass_cb, c);
    return fmax(gpu, strata_serve_mla_kernels_host(c->mla_k, c->m.layers, c->moe_layers, sh.block_fp8));
}

double strata_serve_cost_step_padded(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n, uint32_t pad)
{
    const strata_serve_model *m = &c->m;
    uint64_t tokens = pad, sampled = pad, decodes = pad; /* decodes: one-token chunks, as attention() counts */
    for (uint32_t i = 0; i < n; i++) {
        tokens += chunks[i].tokens;
        sampled += chunks[i].samples;
        decodes += chunks[i].tokens == 1;
    }
    if (!tokens)
        return 0;
    double qk_norms = c->s.kv_lora_rank > 0 ? 0 : qk_norm_pass(c, local_tokens(c, tokens));
    /* every layer's attention: the global ones over their whole context,
     * the sliding ones (strata_serve_window_layers) over their window */
    uint32_t sliding = strata_serve_window_layers(m);
    double attn = (attention(c, chunks, n, pad, 0) + qk_norms) * (m->layers - sliding);
    if (sliding)
        attn += (attention(c, chunks, n, pad, m->sliding_window) + qk_norms) * sliding;
    /* the LM head whole on each rank, its own requests (TensorRT-LLM's enable_lm_head_tp_in_adp off), and
     * its decoder over those rows: the sampler was charged only without attention DP */
    double dense = dense_time(c, (uint32_t)tokens, decodes);
    if (c->dp > 1) {
        uint64_t rows = local_tokens(c, sampled);
        return mla_step(c, dense + attn + bf16_weight_gemm(c, rows, m->hidden, m->vocab, true) +
                               sampler_time(c, rows), decodes);
    }
    return mla_step(c, dense + attn + bf16_weight_gemm(c, sampled, m->hidden, m->vocab / c->tp, true) +
                           vocab_collectives(c, tokens, sampled) + sampler_time(c, sampled), decodes);
}

/* The time of one layer's attention or of the whole step, its ops' work counted into work. */
static double counted(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n, uint64_t window,
                      strata_serve_work *work, bool whole_step)
{
    *work = (strata_serve_work){0};
    c->work = work;
    double t = whole_step ? strata_serve_cost_step(c, chunks, n) : attention(c, chunks, n, 0, window);
    c->work = NULL;
    return t;
}

double strata_serve_cost_attention(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n, uint64_t window,
                                   strata_serve_work *work)
{
    return counted(c, chunks, n, window, work, false);
}

double strata_serve_cost_step_work(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n,
                                   strata_serve_work *work)
{
    return counted(c, chunks, n, 0, work, true);
}

double strata_serve_cost_swap(const strata_serve_cost *c, uint64_t blocks, uint64_t block_bytes, uint32_t tensors)
{
    if (c->links.host_bw <= 0 || !blocks)
        return 0;
    double copies = (double)blocks * (tensors ? tensors : 1);
    return copies * c->links.host_lat + (double)(blocks * block_bytes) / c->links.host_bw;
}

void strata_serve_cost_host_link(const strata_serve_cost *c, double *bandwidth, double *latency)
{
    *bandwidth = c->links.host_bw;
    *latency = c->links.host_lat;
}
