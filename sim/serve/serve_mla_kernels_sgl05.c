/*
 * serve_mla_kernels_sgl05.c: SGLang 0.5.6's DeepSeek-V3/R1 decode layer
 * (serve_mla_kernels_sgl05.h), read in the sglang-0.5.6 PyPI wheel
 * (sglang-0.5.6-py3-none-any.whl, the v0.5.6 tag's python/sglang; paths
 * below are under sglang/srt/), counted against serve_cost.c's ops for an
 * MLA layer (serve_mla_kernels.h: one GEMM for the fused down-projection,
 * one pass for its two norms, q_b and o as block-FP8 linears with their
 * input quantizations, the W_UK and W_UV bmm and the decode attention in
 * mla_decode, one pass for the layer's two add + RMSNorm, the router GEMM,
 * one routing pass and the input quantization before the experts, the
 * routed experts' kernels and the shared expert's MLP).
 *
 * What 0.5.6 changed against 0.4.5 (serve_mla_kernels.c's sglang-0.4.5-mla):
 * - fused_qkv_a_proj_with_mqa is one linear (models/deepseek_v2.py:1217-1222;
 *   forward_absorb_prepare reads it through get_attn_tp_context().
 *   fetch_qkv_latent(), :1757-1763): no second GEMM and no second input
 *   quantization; q_a_layernorm and kv_a_layernorm run on two streams
 *   inside graph capture (alt_stream, :1769-1775): one pass's time as
 *   serve_cost.c charges.
 * - The W_UK / W_UV inputs are quantized by per_tensor_quant_mla_fp8
 *   (:1879-1892, :2052-2069; layers/quantization/fp8_kernel.py:1219-1262:
 *   two Triton kernels, _per_tensor_quant_mla_fp8_stage1 and _stage2) into a
 *   scale torch.zeros((1,)) allocates each call where cuBLAS >= 12.9
 *   (_is_cublas_ge_129, :224; a fill kernel; ESTIMATE: the release's CUDA
 *   12.9 image, else the bump allocator's slot, zeroed once a forward),
 *   3 kernels a bmm where 0.4.5's input_to_float8 ran 12. Only where w_kc
 *   is FP8 (block-FP8 checkpoints: post_load_weights' block_quant_to_tensor_
 *   quant; SGL_USE_DEEPGEMM_BMM, :3592, defaults false); a BF16 model runs
 *   torch.bmm into the output's layout (:2071-2090): fp8_only, and the
 *   output's transpose(0, 1).flatten(1, 2) copy (:2070) with them.
 * - RoPE is RotaryEmbedding.forward_cuda (DeepseekScalingRotaryEmbedding
 *   re-dispatches to forward_native only on HIP, layers/rotary_embedding.py:
 *   811-813): one sgl_kernel apply_rope_with_cos_sin_cache_inplace over
 *   q_pe and k_pe (:1899-1904), where 0.4.5 ran 13 PyTorch ops and two
 *   copies. With an FP8 KV cache on trtllm_mla it is fused into the
 *   backend's mla_rope_quantize (_fuse_rope_for_trtllm_mla, :1720-1731):
 *   strata's cases run a BF16 cache (not modelled apart).
 * - DeepseekV2MoE on CUDA folds routed_scaling_factor into the experts
 *   (forward_normal_dual_stream, :808-809): no scaling kernel.
 *
 * sglang-0.5-mla (Hopper: server_args.py:1312, an MLA model on sm90 takes
 *   the fa3 backend): per layer the two per_tensor_quant_mla_fp8 (3 + 3,
 *   fp8_only), RoPE (1), FlashAttentionBackend.forward_decode's
 *   set_mla_kv_buffer (layers/attention/flashattention_backend.py:1032; 1)
 *   and FA3's split-KV combine after flash_attn_with_kvcache (1; ESTIMATE:
 *   FA3 splits a decode of one request's 16 heads), the output copy (1,
 *   fp8_only). The MoE runner is Triton's fused_moe (moe_runner_backend
 *   auto) with the shared expert fused into it (determine_num_fused_shared_
 *   experts, :3415-3452: DeepSeek-V3 with 256 experts and one shared on
 *   CUDA sm80+): no shared add; serve_cost.c still prices the shared MLP
 *   apart (not changed here).
 * sglang-0.5-mla-sm100 (Blackwell: server_args.py:1016-1024, trtllm_mla
 *   for DeepseekV3ForCausalLM on sm100; :1028-1057 the FlashInfer
 *   all-reduce fusion and the flashinfer_trtllm MoE runner for FP8): the
 *   same quantizations, RoPE and output copy; TRTLLMMLABackend.forward_decode
 *   (layers/attention/trtllm_mla_backend.py:795-891 at a BF16 cache):
 *   set_mla_kv_buffer (1), _concat_mla_absorb_q_general of q_nope and q_rope
 *   into one query (1), forward_batch.seq_lens.to(torch.int32) (1), then
 *   trtllm_batch_decode_with_kv_cache_mla (mla_decode's). In an MoE layer
 *   the shared expert runs apart (flashinfer_trtllm sets
 *   disable_shared_experts_fusion, server_args.py:1521-1527) on a second
 *   stream, and its output is added (final_hidden_states += shared_output,
 *   :812; 1). The FlashInfer all-reduce fusion (the residual add and the
 *   next RMSNorm in the all-reduce kernel, layers/communicator.py, up to
 *   FUSE_ALLREDUCE_MAX_BATCH_SIZE 2048 tokens) is not modelled: the row's
 *   all-reduce stays vllm-custom and its norms one pass (a kernel fewer
 *   than SGLang's unfused pair; noted in docs/serving.md).
 */
#include "serve/serve_mla_kernels_sgl05.h"
#include <glib.h>

#define G SERVE_MLA_GRAPH

/* The entries both rows share, fp8_only where the source runs them only for FP8 weights. */
#define QUANT_W_UK                                                                                                \
    {"per_tensor_quant_mla_fp8 before W_UK's bmm_fp8: the scale's torch.zeros, stage1, stage2", SERVE_MLA_EVERY, \
     3, SERVE_MLA_W_NOPE_Q, true, G, 0, true}
#define QUANT_W_UV                                                                                                \
    {"per_tensor_quant_mla_fp8 before W_UV's bmm_fp8: the scale's torch.zeros, stage1, stage2", SERVE_MLA_EVERY, \
     3, SERVE_MLA_W_NOPE_LATENT_Q, true, G, 0, true}
#define ROPE                                                                                                      \
    {"RoPE: apply_rope_with_cos_sin_cache_inplace on q_pe and k_pe", SERVE_MLA_EVERY, 1, SERVE_MLA_W_ROPE_Q,      \
     false, G, 0, false}
#define SET_KV                                                                                                    \
    {"set_mla_kv_buffer: the token's latent and RoPE key into the cache", SERVE_MLA_EVERY, 1,                     \
     SERVE_MLA_W_CACHE_ROW, false, G, 0, false}
#define OUT_COPY                                                                                                  \
    {"attn_bmm_output.transpose(0, 1).flatten(1, 2) after bmm_fp8: a copy", SERVE_MLA_EVERY, 1, SERVE_MLA_W_V_OUT, \
     false, G, 0, true}

const strata_serve_mla_kernel strata_serve_mla_sglang05_sm90[STRATA_SERVE_MLA_SGLANG05_SM90_N] = {
    QUANT_W_UK,
    QUANT_W_UV,
    ROPE,
    SET_KV,
    {"FA3's split-KV combine after flash_attn_with_kvcache (ESTIMATE: split at decode)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NOPE_LATENT_Q, false, G, 0, false},
    OUT_COPY,
};

const strata_serve_mla_kernel strata_serve_mla_sglang05_sm100[STRATA_SERVE_MLA_SGLANG05_SM100_N] = {
    QUANT_W_UK,
    QUANT_W_UV,
    ROPE,
    SET_KV,
    {"_concat_mla_absorb_q_general: q_nope and q_rope into one query", SERVE_MLA_EVERY, 1, SERVE_MLA_W_LATENT_Q,
     false, G, 0, false},
    {"forward_batch.seq_lens.to(torch.int32) before trtllm_batch_decode_with_kv_cache_mla", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_NONE, false, G, 0, false},
    OUT_COPY,
    {"final_hidden_states += shared_output: the shared expert's output added", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN,
     false, G, 0, false},
};

#undef G
#undef QUANT_W_UK
#undef QUANT_W_UV
#undef ROPE
#undef SET_KV
#undef OUT_COPY
