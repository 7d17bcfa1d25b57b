/*
 * serve_mla_kernels.c: the rows of serve_mla_kernels.h, a DeepSeek-V3/R1
 * decoder layer's decode kernels as two engines launch them, counted
 * against what serve_cost.c prices for that engine's row.
 *
 * Read from the engines' Python (vllm-project/vllm and sgl-project/sglang;
 * the v0.8.4 and v0.4.5 tags' snapshots are over this environment's fetch
 * limit, so the files were read in the search index's stored copies of the
 * same era, not pinned to the tags: vllm/v1/attention/backends/mla/
 * common.py and flashmla.py, vllm/model_executor/layers/rotary_embedding.py,
 * vllm/model_executor/models/deepseek_v2.py, vllm/model_executor/layers/
 * fused_moe/fused_moe.py; sglang/srt/models/deepseek_v2.py,
 * sglang/srt/layers/rotary_embedding.py; docs/serving.md, "DeepSeek-V3's
 * decode step, kernel by kernel (wave 34)", lists what each entry stands
 * for and what was not confirmed at the tag).
 *
 * vllm-0.8-mla: vLLM 0.8.x V1 (the default engine row, vllm-v1) with the
 *   FLASHMLA backend on Hopper. Piecewise CUDA graphs: torch.compile splits
 *   the model at the attention op (compilation config splitting_ops
 *   ["vllm.unified_attention", "vllm.unified_attention_with_output"]) and
 *   replays a graph for each piece between them, the attention op running
 *   eagerly (vllm-project/vllm PR #10058; PR #11635's comment: "captures
 *   all ops except attention and runs the attention op in eager PyTorch").
 *   In the graph pieces: the layer's two fused add + RMSNorm
 *   (input_layernorm, post_attention_layernorm), q_a_proj and
 *   kv_a_proj_with_mqa as two block-FP8 linears (apply_w8a8_block_fp8_linear:
 *   per_token_group_quant_fp8, then the GEMM; vllm-v1's row runs no
 *   quantization before them in serve_cost.c, whose fused all-reduce
 *   epilogue is TensorRT-LLM's), q_a_layernorm and kv_a_layernorm as two
 *   kernels; in an MoE layer grouped_topk (torch.compile'd: sigmoid and
 *   the correction bias, the groups' top-2 sums, top-4 groups, the scatter
 *   mask and masked_fill, top-8, gather and renormalize: 8 kernels where
 *   serve_cost.c runs one routing pass), the routed output times
 *   routed_scaling_factor and the shared expert's output added; in a dense
 *   layer the quantization before gate_up_proj. Eagerly in the attention
 *   op (MLACommonImpl.forward): q_b_proj (Triton quantization, GEMM),
 *   q_nope times W_UK_T (torch.bmm), RoPE through the rotary embedding's
 *   forward_cuda, which MLACommonImpl.__init__ takes on CUDA in place of
 *   the module's call ("Hack for V1 ... pull out the forward method";
 *   vllm 0.8.0 and 0.8.4 wheels, v1/attention/backends/mla/common.py
 *   :616-622 in both, called at 0.8.4 :903-905):
 *   DeepseekScalingRotaryEmbedding overrides forward only, so the base
 *   RotaryEmbedding.forward_cuda (model_executor/layers/rotary_embedding.py
 *   :155-181 at 0.8.4) runs ops.rotary_embedding, one kernel rotating
 *   decode_q_pe.contiguous() (a copy: q_pe is a split of q_proj's output,
 *   :648-658) and k_pe in place; the rotated q copied back
 *   (decode_q_pe[...] =), while decode_k_pe[...] = k_pe copies a tensor
 *   onto itself, which PyTorch's copy_impl returns from at once
 *   (aten/src/ATen/native/Copy.cpp, self.is_same(src)). Wave 34 priced
 *   DeepseekScalingRotaryEmbedding.forward's 13 PyTorch ops and two copies,
 *   which V0 runs (serve_mla_kernels_v07.c), not V1 on CUDA, this row's
 *   only platform (serve_engine_apply.c; on ROCm, is_cuda() false, V1
 *   takes the base class's forward_native instead);
 *   ops.concat_and_cache_mla, torch.cat of q_nope and q_pe,
 *   flash_mla_with_kvcache (the split-KV kernel and its combine), W_UV's
 *   bmm and the transpose(0, 1).reshape copy after it, o_proj (Triton
 *   quantization, GEMM) and the result copied into the graph's output
 *   buffer (output[:num_decode_tokens] = ...). Once a step, the metadata
 *   builder runs FlashMLA's get_mla_metadata.
 * sglang-0.4.5-mla: SGLang 0.4.5 (sglang-v0.4's row), decode in one CUDA
 *   graph up to 160 requests (serve_graph_limit.c's sglang-0.4):
 *   DeepseekV2AttentionMLA.forward_absorb runs q_a_proj and
 *   kv_a_proj_with_mqa as two block-FP8 linears (serve_cost.c's sglang-v0.4
 *   row already quantizes once before them), q_a_layernorm, the latent's
 *   .contiguous() copy and kv_a_layernorm, the normed latent copied into
 *   k_input, W_UK and W_UV as per-tensor FP8 bmm (bmm_fp8) each after
 *   input_to_float8 (aminmax, two abs, maximum, float, clamp, the scale's
 *   division, the input's float, product, clamp, FP8 cast and reciprocal:
 *   12 kernels, the bmm's own input transposed in place), q_nope_out
 *   copied into q_input, the same PyTorch-ops RoPE and its two copies into
 *   q_input and k_input, the attention backend's cache write
 *   (set_kv_buffer) and split-KV combine, the output's transpose(0, 1)
 *   .flatten(1, 2) copy; two fused add + RMSNorm a layer; DeepseekV2MoE's
 *   biased_grouped_topk (torch.compile'd, as vLLM's), the scaling product
 *   and the shared output's sum.
 *
 * Entries marked fp8_only (the last field) run only under block-FP8
 * weights (wave 35): vLLM's apply_w8a8_block_fp8_linear quantizes a
 * linear's input only for FP8 weights, and SGLang's bmm_fp8 path (with its
 * input_to_float8) runs only where w_kc is FP8, a BF16 checkpoint taking
 * torch.bmm (deepseek_v2.py forward_absorb: `elif self.w_kc.dtype ==
 * torch.float8_e4m3fn` ... `else: torch.bmm`, the same branch at 0.5.6).
 * SGLang 0.5.6's rows are serve_mla_kernels_sgl05.c's; vLLM 0.7.3 V0's
 * (vllm-0.7-v0-mla) serve_mla_kernels_v07.c's.
 *
 * The host's time an eager launch (serve_mla_kernels.h):
 *   ATEN    4 us: PyTorch's per-operator overhead on CUDA
 *           (pytorch/pytorch#82793: "4 us per op on CUDA"; #41383: 5 us an
 *           op at requires_grad=False, about 2 us of it Python's);
 *   TRITON  11 us: a Triton kernel's Python launch path
 *           (meta-pytorch/tritonbench PR #1002, as docs/serving.md cites
 *           it for vLLM V1's eager attention);
 *   ENTRY   10 us: a call into an op registered with torch.Library directly
 *           (vLLM's direct_register_custom_op), pytorch/pytorch#139500 as
 *           NVIDIA/cudnn-frontend PR #308 quotes it ("~36 us per-call
 *           overhead vs ~10 us for direct torch.Library registration");
 *           the next piece's graph replay (cudaGraphLaunch and vLLM's
 *           piecewise backend's Python) taken at the same figure: ESTIMATE.
 */
#include "serve/serve_mla_kernels.h"
#include "core/error.h"
#include "serve/serve_names.h"
#include "serve/serve_mla_kernels_sgl05.h"
#include "serve/serve_mla_kernels_v07.h"

/* The layers an entry runs in (1 for a step's own). */
static uint64_t entry_layers(const strata_serve_mla_kernel *e, uint32_t layers, uint32_t moe_layers)
{
    switch (e->where) {
    case SERVE_MLA_EVERY:
        return layers;
    case SERVE_MLA_MOE:
        return moe_layers;
    case SERVE_MLA_DENSE:
        return layers > moe_layers ? layers - moe_layers : 0;
    case SERVE_MLA_STEP:
        return 1;
    }
    return 0;
}

static uint64_t width_elements(serve_mla_width w, const strata_serve_mla_shape *s)
{
    switch (w) {
    case SERVE_MLA_W_NONE:
        return 0;
    case SERVE_MLA_W_HIDDEN:
        return s->hidden;
    case SERVE_MLA_W_KV_LORA:
        return s->kv_lora;
    case SERVE_MLA_W_ROPE_Q:
        return s->heads * s->rope;
    case SERVE_MLA_W_ROPE_K:
        return s->rope;
    case SERVE_MLA_W_CACHE_ROW:
        return s->kv_lora + s->rope;
    case SERVE_MLA_W_LATENT_Q:
        return s->heads * (s->kv_lora + s->rope);
    case SERVE_MLA_W_NOPE_LATENT_Q:
        return s->heads * s->kv_lora;
    case SERVE_MLA_W_V_OUT:
        return s->heads * s->v_head;
    case SERVE_MLA_W_EXPERTS:
        return s->experts;
    case SERVE_MLA_W_NOPE_Q:
        return s->heads * s->nope;
    case SERVE_MLA_W_UK_WEIGHT:
        return s->heads * s->nope * s->kv_lora;
    case SERVE_MLA_W_UV_WEIGHT:
        return s->heads * s->kv_lora * s->v_head;
    case SERVE_MLA_W_KV_SPLITS4_F32:
        return s->heads * 4 * (s->kv_lora + 1);
    case SERVE_MLA_W_ROPE_QK:
        return (s->heads + 1) * s->rope;
    }
    return 0;
}

/* Whether width w is a step's (a weight read whole), not a token's. */
static bool width_per_step(serve_mla_width w) { return w == SERVE_MLA_W_UK_WEIGHT || w == SERVE_MLA_W_UV_WEIGHT; }

#define HOST_ATEN_S 4e-6
#define HOST_TRITON_S 11e-6
#define HOST_ENTRY_S 10e-6

#define G SERVE_MLA_GRAPH
#define A SERVE_MLA_ATEN
#define T SERVE_MLA_TRITON

static const strata_serve_mla_kernel vllm_08[] = {
    /* in the graph pieces */
    {"input_layernorm, post_attention_layernorm: two fused add + RMSNorm (one pass in serve_cost.c)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"kv_a_proj_with_mqa's GEMM apart from q_a_proj's (one GEMM in serve_cost.c)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NONE, false, G, 0, false},
    {"per_token_group_quant_fp8 before q_a_proj and kv_a_proj_with_mqa", SERVE_MLA_EVERY, 2, SERVE_MLA_W_HIDDEN,
     true, G, 0, true},
    {"q_a_layernorm, kv_a_layernorm: two RMSNorm (one pass in serve_cost.c)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_KV_LORA, false, G, 0, false},
    {"grouped_topk (torch.compile'd): 8 kernels, one routing pass in serve_cost.c", SERVE_MLA_MOE, 7,
     SERVE_MLA_W_EXPERTS, false, G, 0, false},
    {"experts(...) * routed_scaling_factor", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"final_hidden_states + shared_output", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"per_token_group_quant_fp8 before a dense layer's gate_up_proj", SERVE_MLA_DENSE, 1, SERVE_MLA_W_HIDDEN, true,
     G, 0, true},
    /* eagerly, in unified_attention_with_output */
    {"the attention op's call and the next piece's graph replay", SERVE_MLA_EVERY, 0, SERVE_MLA_W_NONE, false,
     SERVE_MLA_ENTRY, 2, false},
    {"per_token_group_quant_fp8 before q_b_proj and o_proj (priced in serve_cost.c)", SERVE_MLA_EVERY, 0,
     SERVE_MLA_W_NONE, false, T, 2, true},
    {"q_b_proj's and o_proj's GEMM, the W_UK and W_UV bmm, flash_mla_with_kvcache (priced in serve_cost.c)",
     SERVE_MLA_EVERY, 0, SERVE_MLA_W_NONE, false, A, 5, false},
    {"decode_q_pe.contiguous(): q_pe (a split of q_proj's output) copied before RoPE", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_ROPE_Q, false, A, 1, false},
    {"RoPE: RotaryEmbedding.forward_cuda's ops.rotary_embedding, q_pe and k_pe rotated in place", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_ROPE_QK, false, A, 1, false},
    {"decode_q_pe[...] = q: the rotated copy back (decode_k_pe[...] = k_pe itself: copy_ of a tensor onto itself "
     "launches nothing)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_ROPE_Q, false, A, 2, false},
    {"ops.concat_and_cache_mla: the token's latent and RoPE key into the cache", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_CACHE_ROW, false, A, 1, false},
    {"torch.cat([q_nope, q_pe]) before flash_mla_with_kvcache", SERVE_MLA_EVERY, 1, SERVE_MLA_W_LATENT_Q, false, A,
     1, false},
    {"FlashMLA's combine after its split-KV kernel (launched by the same call)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NOPE_LATENT_Q, false, A, 0, false},
    {"W_UV's output .transpose(0, 1).reshape(): a copy", SERVE_MLA_EVERY, 1, SERVE_MLA_W_V_OUT, false, A, 1, false},
    {"output[:num_decode_tokens] = ...: into the graph's output buffer", SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN,
     false, A, 1, false},
    {"get_mla_metadata (FlashMLA's tile scheduler), once a step", SERVE_MLA_STEP, 1, SERVE_MLA_W_NONE, false, A, 1,
     false},
};

static const strata_serve_mla_kernel sglang_045[] = {
    {"input_layernorm, post_attention_layernorm: two fused add + RMSNorm (one pass in serve_cost.c)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"kv_a_proj_with_mqa's GEMM apart from q_a_proj's (one GEMM in serve_cost.c)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NONE, false, G, 0, false},
    {"the quantization before kv_a_proj_with_mqa (serve_cost.c runs the one before q_a_proj)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_HIDDEN, true, G, 0, true},
    {"q_a_layernorm, kv_a_layernorm apart (one pass in serve_cost.c)", SERVE_MLA_EVERY, 1, SERVE_MLA_W_KV_LORA,
     false, G, 0, false},
    {"v_input.contiguous() before kv_a_layernorm, k_input[..., :kv_lora_rank] = v_input", SERVE_MLA_EVERY, 2,
     SERVE_MLA_W_KV_LORA, false, G, 0, false},
    {"input_to_float8 before the W_UK bmm_fp8 (on q_nope): 12 kernels", SERVE_MLA_EVERY, 12, SERVE_MLA_W_NOPE_Q,
     false, G, 0, true},
    {"input_to_float8 before the W_UV bmm_fp8: 12 kernels", SERVE_MLA_EVERY, 12, SERVE_MLA_W_NOPE_LATENT_Q, false,
     G, 0, true},
    {"q_input[..., :kv_lora_rank] = q_nope_out.transpose(0, 1)", SERVE_MLA_EVERY, 1, SERVE_MLA_W_NOPE_LATENT_Q, false,
     G, 0, false},
    {"RoPE: cos_sin_cache[positions] and the two repeat_interleave", SERVE_MLA_EVERY, 3, SERVE_MLA_W_ROPE_K, false,
     G, 0, false},
    {"RoPE on q_pe: -x2, stack, x * cos, rotated * sin, their sum", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_Q, false, G,
     0, false},
    {"RoPE on k_pe: the same five", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_K, false, G, 0, false},
    {"q_input[..., kv_lora_rank:] = q_pe, k_input[..., kv_lora_rank:] = k_pe", SERVE_MLA_EVERY, 2,
     SERVE_MLA_W_ROPE_Q, false, G, 0, false},
    {"set_kv_buffer: the token's cache row written", SERVE_MLA_EVERY, 1, SERVE_MLA_W_CACHE_ROW, false, G, 0, false},
    {"the decode attention's split-KV combine", SERVE_MLA_EVERY, 1, SERVE_MLA_W_NOPE_LATENT_Q, false, G, 0, false},
    {"attn_bmm_output.transpose(0, 1).flatten(1, 2): a copy", SERVE_MLA_EVERY, 1, SERVE_MLA_W_V_OUT, false, G, 0,
     false},
    {"biased_grouped_topk (torch.compile'd): 8 kernels, one routing pass in serve_cost.c", SERVE_MLA_MOE, 7,
     SERVE_MLA_W_EXPERTS, false, G, 0, false},
    {"experts(...) * routed_scaling_factor", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"final_hidden_states + shared_output", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
};

#undef G
#undef A
#undef T

static const strata_serve_mla_kernels rows[] = {
    {"vllm-0.8-mla", vllm_08, G_N_ELEMENTS(vllm_08), NULL},
    {"vllm-0.7-v0-mla", strata_serve_mla_vllm07_v0, STRATA_SERVE_MLA_VLLM07_V0_N, NULL},
    {"sglang-0.4.5-mla", sglang_045, G_N_ELEMENTS(sglang_045), NULL},
    {"sglang-0.5-mla", strata_serve_mla_sglang05_sm90, STRATA_SERVE_MLA_SGLANG05_SM90_N, "sglang-0.5-mla-sm100"},
    {"sglang-0.5-mla-sm100", strata_serve_mla_sglang05_sm100, STRATA_SERVE_MLA_SGLANG05_SM100_N, NULL},
    {NULL, NULL, 0, NULL},
};

const strata_serve_mla_kernels *strata_serve_mla_kernels_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_mla_kernels), name, STRATA_ERROR_INTERNAL, err,
                              "unknown MLA layer kernels '%s' (known: %s)");
}

strata_serve_mla_pass strata_serve_mla_kernels_pass(const strata_serve_mla_kernels *r, uint32_t i,
                                                    const strata_serve_mla_shape *s, uint64_t tokens)
{
    strata_serve_mla_pass p = {0, 1, 0};
    if (!r || i >= r->n_entries || !tokens)
        return p;
    const strata_serve_mla_kernel *e = &r->entries[i];
    if (e->fp8_only && !s->block_fp8)
        return p;
    p.times = (uint64_t)e->kernels * entry_layers(e, s->layers, s->moe_layers);
    uint64_t n = (width_per_step(e->width) ? 1 : tokens) * width_elements(e->width, s);
    p.elements = n ? n : 1;
    p.bytes = e->width == SERVE_MLA_W_KV_SPLITS4_F32 ? (double)n * (4.0 + 4.0) /* fp32 written, then read */
                                                     : (double)n * (s->act_bytes + (e->to_fp8 ? 1.0 : s->act_bytes));
    return p;
}

double strata_serve_mla_kernels_time(const strata_serve_mla_kernels *r, const strata_serve_mla_shape *s,
                                     uint64_t tokens, strata_serve_pass_fn pass_fn, const void *ctx)
{
    double t = 0;
    for (uint32_t i = 0; r && tokens && i < r->n_entries; i++) {
        strata_serve_mla_pass p = strata_serve_mla_kernels_pass(r, i, s, tokens);
        if (p.times)
            t += (double)p.times * pass_fn(ctx, p.elements, p.bytes);
    }
    return t;
}

uint64_t strata_serve_mla_kernels_count(const strata_serve_mla_kernels *r, uint32_t layers, uint32_t moe_layers,
                                        bool block_fp8)
{
    uint64_t n = 0;
    for (uint32_t i = 0; r && i < r->n_entries; i++)
        if (block_fp8 || !r->entries[i].fp8_only)
            n += (uint64_t)r->entries[i].kernels * entry_layers(&r->entries[i], layers, moe_layers);
    return n;
}

double strata_serve_mla_host_call_s(serve_mla_launch l)
{
    return l == SERVE_MLA_ATEN ? HOST_ATEN_S : l == SERVE_MLA_TRITON ? HOST_TRITON_S
                                             : l == SERVE_MLA_ENTRY  ? HOST_ENTRY_S
                                                                     : 0;
}

double strata_serve_mla_kernels_host(const strata_serve_mla_kernels *r, uint32_t layers, uint32_t moe_layers,
                                     bool block_fp8)
{
    double t = 0;
    for (uint32_t i = 0; r && i < r->n_entries; i++) {
        const strata_serve_mla_kernel *e = &r->entries[i];
        if (block_fp8 || !e->fp8_only)
            t += (double)e->calls * strata_serve_mla_host_call_s(e->launch) *
                 (double)entry_layers(e, layers, moe_layers);
    }
    return t;
}

const strata_serve_mla_kernels *strata_serve_mla_kernels_on_blackwell(const strata_serve_mla_kernels *r)
{
    const strata_serve_mla_kernels *b = r && r->blackwell ? strata_serve_mla_kernels_find(r->blackwell, NULL) : NULL;
    return b ? b : r;
}
