/*
 * serve_mla_rocm.c: the rows of serve_mla_rocm.h, a DeepSeek-V3/R1
 * decoder layer's decode kernels as SGLang's ROCm build launches them on
 * gfx942, counted against what serve_cost.c prices for sglang-v0.4's row.
 *
 * Read from SGLang's Python in the search index's stored copies of the 0.5
 * line (sgl-project/sglang and forks carrying the same code; the v0.5.7
 * tag's snapshot is over this environment's fetch limit, so the files were
 * not pinned to the tag: python/sglang/srt/models/deepseek_v2.py,
 * DeepseekV2AttentionMLA.forward_absorb_prepare and forward_absorb_core;
 * python/sglang/srt/layers/rotary_embedding.py,
 * DeepseekScalingRotaryEmbedding) and from ROCm/aiter @e4048607
 * (aiter/mla.py, mla_decode_fwd). docs/serving.md, "Decode on MI300X as
 * SGLang and vLLM run it (wave 35)", lists what each entry stands for and
 * what was read and not built.
 *
 * sglang-0.5-rocm-mla: SGLang 0.5 on gfx942 with aiter (SGLANG_USE_AITER,
 *   the ROCm images' setting), decode in one HIP graph (SGLang's CUDA graph
 *   runner, on by default on ROCm as on CUDA), so every entry is GRAPH.
 *   The layer's two fused add + RMSNorm (one pass in serve_cost.c);
 *   q_a_layernorm and kv_a_layernorm as two kernels (gfx950 alone fuses
 *   them with the quantization, `_use_aiter_gfx95` and
 *   fused_rms_fp8_group_quant); q_a_proj and kv_a_proj_with_mqa are one
 *   GEMM (fused_qkv_a_proj_with_mqa) after one quantization, as
 *   serve_cost.c prices them: nothing added. RoPE: on HIP
 *   DeepseekScalingRotaryEmbedding re-dispatches to forward_native ("if
 *   _is_hip: self._forward_method = self.forward_native"): the
 *   cos_sin_cache[positions] gather, the two repeat_interleave, and for
 *   q_pe and for k_pe x * cos, _rotate_gptj's negation and stack, rotated *
 *   sin and the sum (5 each): 13 kernels. W_UK and W_UV (corrected at
 *   the wave-35 merge after review, read in the sglang 0.5.6 and 0.5.7
 *   wheels from PyPI, deepseek_v2.py l. 1860-1877 and 1972-1989): only
 *   under _use_aiter_gfx95 one Triton batched GEMM each
 *   (batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_
 *   quant); on gfx942 the FP8 weights stay FP8 and each call runs
 *   torch.bmm(q_nope.to(bf16), self.w_kc.to(torch.bfloat16) *
 *   self.w_scale), and the same for w_vc: a cast and a multiply over the
 *   rank's whole weight every step, whatever the batch (2 kernels each;
 *   charged at the activations' 2 + 2 B an element each, where the cast
 *   reads 1 B: 8 B an element against 7), FP8 models only; the bmm is
 *   serve_cost.c's. forward_absorb_core off gfx950:
 *   q = torch.cat([q_nope_out, q_pe]) and k = torch.cat([k_nope, k_pe])
 *   (gfx950 fuses them with RoPE and the cache write), the attention
 *   backend's set_kv_buffer, aiter's mla_decode_fwd (its assembly stage-1
 *   kernel is serve_cost.c's decode op; with num_kv_splits > 1 it launches
 *   the Triton reduce _fwd_kernel_stage2_asm after it, aiter/mla.py), and
 *   attn_bmm_output.transpose(0, 1).flatten(1, 2), a copy. The MoE layer:
 *   aiter's biased_grouped_topk is one kernel (serve_cost.c's routing pass)
 *   and aiter's fused_moe applies routed_scaling_factor through the
 *   weights: nothing added.
 */
#include "serve/serve_mla_rocm.h"
#include "core/error.h"
#include "serve/serve_names.h"

#define G SERVE_MLA_GRAPH

static const strata_serve_mla_kernel sglang_05_rocm[] = {
    {"input_layernorm, post_attention_layernorm: two fused add + RMSNorm (one pass in serve_cost.c)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"q_a_layernorm, kv_a_layernorm apart (one pass in serve_cost.c; fused with the quantization on gfx950 only)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_KV_LORA, false, G, 0, false},
    {"RoPE (forward_native on HIP): cos_sin_cache[positions] and the two repeat_interleave", SERVE_MLA_EVERY, 3,
     SERVE_MLA_W_ROPE_K, false, G, 0, false},
    {"RoPE on q_pe: x * cos, -x2, stack, rotated * sin, their sum", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_Q, false, G,
     0, false},
    {"RoPE on k_pe: the same five", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_K, false, G, 0, false},
    {"q = torch.cat([q_nope_out, q_pe]) (fused with RoPE on gfx950 only)", SERVE_MLA_EVERY, 1, SERVE_MLA_W_LATENT_Q,
     false, G, 0, false},
    {"k = torch.cat([k_nope, k_pe])", SERVE_MLA_EVERY, 1, SERVE_MLA_W_CACHE_ROW, false, G, 0, false},
    {"set_kv_buffer: the token's cache row written", SERVE_MLA_EVERY, 1, SERVE_MLA_W_CACHE_ROW, false, G, 0, false},
    {"mla_decode_fwd's split-KV reduce (_fwd_kernel_stage2_asm, launched by the same call)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NOPE_LATENT_Q, false, G, 0, false},
    {"attn_bmm_output.transpose(0, 1).flatten(1, 2): a copy", SERVE_MLA_EVERY, 1, SERVE_MLA_W_V_OUT, false, G, 0, false},
    {"W_UK off gfx950: self.w_kc.to(torch.bfloat16) * self.w_scale, a cast and a multiply over the FP8 weight",
     SERVE_MLA_EVERY, 2, SERVE_MLA_W_UK_WEIGHT, false, G, 0, true},
    {"W_UV off gfx950: self.w_vc.to(torch.bfloat16) * self.w_scale, the same two", SERVE_MLA_EVERY, 2,
     SERVE_MLA_W_UV_WEIGHT, false, G, 0, true},
};

#undef G

static const strata_serve_mla_kernels rows[] = {
    {"sglang-0.5-rocm-mla", sglang_05_rocm, G_N_ELEMENTS(sglang_05_rocm), NULL},
    {NULL, NULL, 0, NULL},
};

const strata_serve_mla_kernels *strata_serve_mla_rocm_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_mla_kernels), name, STRATA_ERROR_INTERNAL, err,
                              "unknown ROCm MLA layer kernels '%s' (known: %s)");
}
