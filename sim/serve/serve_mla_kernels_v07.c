/*
 * serve_mla_kernels_v07.c: vLLM 0.7.3 V0's DeepSeek-V3/R1 decode layer on CUDA (serve_mla_kernels_v07.h), read in
 * the vllm-0.7.3 PyPI wheel (vllm-0.7.3-cp38-abi3-manylinux1_x86_64.whl, the v0.7.3 tag's build; paths below are
 * under vllm/), counted against what serve_cost.c prices for the vllm-v0 row's MLA layer at decode (absorbed
 * weights, mla_absorb): one GEMM for q_a_proj and kv_a_proj_with_mqa, one quantization before it (fp8_input_quant),
 * one pass for q_a_layernorm and kv_a_layernorm, W_Q_UK (block-FP8, its input quantized), W_QR (bf16) and W_UV_O
 * (block-FP8, its input quantized), one flash op for the decode attention, one pass for the layer's two add +
 * RMSNorm, two all-reduces; in an MoE layer the router's GEMM, one routing pass, the experts' input quantization,
 * the routed experts' kernels (serve_cost.c experts_grouped: one expert-map pass, a permute pass, a small pass, two
 * fused_moe GEMMs, the activation, gemm2's input quantization, the combine) and the shared expert's MLP.
 *
 * What 0.7.3's V0 runs in a decode (the model runner captures the whole forward in one CUDA graph at batch <= 256
 * and context <= max_seq_len_to_capture, worker/model_runner.py:881-884, 8,192 by default, engine/arg_utils.py:137;
 * inside those every kernel below is replayed, none launched from Python; past them the step runs eagerly, its
 * launches serve_eager.c's vllm-0.7 row):
 * - DeepseekV2DecoderLayer.forward (model_executor/models/deepseek_v2.py:535-561): input_layernorm and
 *   post_attention_layernorm, two fused add + RMSNorm kernels (serve_cost.c: one pass).
 * - DeepseekV2MLAAttention.forward (:454-470): q_a_proj and kv_a_proj_with_mqa are two block-FP8 linears, each
 *   apply_w8a8_block_fp8_linear (model_executor/layers/quantization/utils/fp8_utils.py:34-78: per_token_group_quant_
 *   fp8, then cutlass_scaled_mm on sm90 where both weight dimensions are multiples of 128, q_a_proj's 1536 x 7168,
 *   else w8a8_block_fp8_matmul, the Triton block GEMM, kv_a_proj_with_mqa's N = 576): one GEMM and one quantization
 *   more than serve_cost.c's; q_a_layernorm (:463) and kv_a_layernorm (:468) two RMSNorm kernels (one pass priced); the
 *   latent's kv_c.contiguous() (:468), a copy of a slice of kv_a's output.
 * - MLACommonImpl.forward at decode (attention/backends/mla/utils.py:419-475): _q_proj_and_k_up_proj (:216-226,
 *   W_Q_UK through apply_fp8_linear_generic: priced), torch.matmul with W_QR (priced), then RoPE as
 *   DeepseekScalingRotaryEmbedding.forward runs it in PyTorch ops (model_executor/layers/rotary_embedding.py:681-
 *   719, rotary_dim = head_size = qk_rope_head_dim, GPT-J style): cos_sin_cache[positions] and two
 *   repeat_interleave (:697-707), and for q_pe and for k_pe x * cos, _rotate_gptj's -x2 and stack (:41-45), times
 *   sin and the sum (:710-711): 3 + 5 + 5 kernels, no copy back (0.7.3 returns new tensors; 0.8's V1 row copies
 *   them); ops.concat_and_cache_mla (:463-470): the token's latent and RoPE key into the cache.
 * - TritonMLAImpl._forward_decode (attention/backends/triton_mla.py:698-746; the CUDA platform's MLA backend in
 *   0.7.3, platforms/cuda.py:159-161): torch.cat([q_nope, q_pe]) (:713), torch.zeros of the output (:714-718),
 *   decode_attention_fwd (attention/ops/triton_decode_attention.py:595-622: _decode_grouped_att_m_fwd, priced as
 *   the flash op, then _decode_softmax_reducev_fwd over num_kv_splits = 4, one kernel more: stage 1 writes and
 *   stage 2 reads attn_logits, fp32 [batch, heads, num_kv_splits, kv_lora_rank + 1] (triton_mla.py:720-732,
 *   num_kv_splits = 4 at :259 and :645), priced on the stage-2 entry at 8 B an element), then
 *   _v_up_proj_and_o_proj (:196-214: W_UV_O and the all-reduce, priced; o.flatten is a view).
 * - DeepseekV2MoE.forward (deepseek_v2.py:155-171): the gate is a bf16 ReplicatedLinear (priced), then
 *   FusedMoE's grouped_topk, @torch.compile'd with the platform's simple_compile_backend "inductor"
 *   (model_executor/layers/fused_moe/fused_moe.py:921-975, platforms/interface.py:110): sigmoid and the correction
 *   bias, the groups' top-2 sums, the top-4 groups, the scatter mask and masked_fill, the top-8, the gather and the
 *   renormalization, 8 kernels as vllm-0.8-mla counts the same function (serve_mla_kernels.c), one of them
 *   serve_cost.c's routing pass; fused_experts_impl (:1123-1275) with moe_align_block_size (:585-621: sorted_ids
 *   .fill_, then for E = 256 ops.sgl_moe_align_block_size: a torch::zeros cumsum buffer, sgl_moe_align_block_size_
 *   kernel and sgl_moe_token_sort_kernel, the last two found in the wheel's _moe_C.abi3.so), per_token_group_quant_fp8
 *   and fused_moe_kernel twice (invoke_fused_moe_kernel, :653), silu_and_mul, ops.moe_sum (top_k 8: at::sum_out):
 *   10 kernels where serve_cost.c prices 9 (the four alignment kernels against its map and small passes, and a
 *   permute pass vLLM does not run: one kernel more, its bytes left priced); the routed output times
 *   routed_scaling_factor (:162-164) and the shared output added (:165-166), two kernels.
 * - A dense layer's MLP (DeepseekV2MLP) quantizes before gate_up_proj and down_proj: both priced for vllm-v0
 *   (fp8_input_quant is not fused into vLLM's custom all-reduce), nothing more.
 *
 * Not read: the H200 runs of serving held-out set 18 used a 0.7.4 nightly (0.7.4.dev181+gf35f8e22) with
 * VLLM_ATTENTION_BACKEND=FLASHMLA, a V0 backend 0.7.3 does not ship: it would run flash_mla_with_kvcache's two
 * kernels for Triton's two and no torch.zeros of the output (one kernel a layer less), and FlashMLA's
 * get_mla_metadata once a step; that nightly's other MLA code was not read. This row is 0.7.3's.
 */
#include "serve/serve_mla_kernels_v07.h"

#define G SERVE_MLA_GRAPH

const strata_serve_mla_kernel strata_serve_mla_vllm07_v0[STRATA_SERVE_MLA_VLLM07_V0_N] = {
    {"input_layernorm, post_attention_layernorm: two fused add + RMSNorm (one pass in serve_cost.c)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"kv_a_proj_with_mqa's Triton block GEMM (N = 576) apart from q_a_proj's (one GEMM in serve_cost.c)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_NONE, false, G, 0, false},
    {"per_token_group_quant_fp8 before kv_a_proj_with_mqa (serve_cost.c quantizes once before q_a_proj)",
     SERVE_MLA_EVERY, 1, SERVE_MLA_W_HIDDEN, true, G, 0, true},
    {"q_a_layernorm, kv_a_layernorm: two RMSNorm (one pass in serve_cost.c)", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_KV_LORA, false, G, 0, false},
    {"kv_c.contiguous() before kv_a_layernorm: a copy", SERVE_MLA_EVERY, 1, SERVE_MLA_W_KV_LORA, false, G, 0, false},
    {"RoPE: cos_sin_cache[positions] and the two repeat_interleave", SERVE_MLA_EVERY, 3, SERVE_MLA_W_ROPE_K, false,
     G, 0, false},
    {"RoPE on q_pe: x * cos, -x2, stack, rotated * sin, their sum", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_Q, false, G,
     0, false},
    {"RoPE on k_pe: the same five", SERVE_MLA_EVERY, 5, SERVE_MLA_W_ROPE_K, false, G, 0, false},
    {"ops.concat_and_cache_mla: the token's latent and RoPE key into the cache", SERVE_MLA_EVERY, 1,
     SERVE_MLA_W_CACHE_ROW, false, G, 0, false},
    {"torch.cat([q_nope, q_pe]) before decode_attention_fwd", SERVE_MLA_EVERY, 1, SERVE_MLA_W_LATENT_Q, false, G,
     0, false},
    {"torch.zeros of the output", SERVE_MLA_EVERY, 1, SERVE_MLA_W_NOPE_LATENT_Q, false, G, 0, false},
    {"_decode_softmax_reducev_fwd: the split-KV partials (fp32, 4 splits) stage 1 wrote, read back", SERVE_MLA_EVERY,
     1, SERVE_MLA_W_KV_SPLITS4_F32, false, G, 0, false},
    {"grouped_topk (torch.compile'd): 8 kernels, one routing pass in serve_cost.c", SERVE_MLA_MOE, 7,
     SERVE_MLA_W_EXPERTS, false, G, 0, false},
    {"moe_align_block_size's fill, zeros, align and sort against serve_cost.c's three passes (a launch only)",
     SERVE_MLA_MOE, 1, SERVE_MLA_W_NONE, false, G, 0, false},
    {"experts(...) * routed_scaling_factor", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
    {"final_hidden_states + shared_output", SERVE_MLA_MOE, 1, SERVE_MLA_W_HIDDEN, false, G, 0, false},
};

#undef G
