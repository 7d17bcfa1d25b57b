/*
 * serve_eager.c: the host chain of an eager forward (serve_eager.h), one
 * row an engine whose layers were counted, named by its engine rows.
 *
 * "sglang" (the sglang-v0.3 and -v0.4 rows) and "sglang-0.5" (sglang-v0.5): a step with prefill tokens runs
 * ModelRunner.forward_extend, no CUDA graph (graphs are captured for decode
 * batches only: cuda_graph_runner.py; docs/serving.md, "TTFT at low load",
 * for 0.3.0). Counted in the sglang 0.5.6 wheel (PyPI), Qwen3-MoE as TP
 * runs it (no EP, no attention DP, BF16 experts on the Triton fused MoE),
 * the calls that reach the dispatcher or launch a kernel, a layer:
 * - attn: LayerCommunicator.prepare_attn's fused_add_rmsnorm (layers/
 *   communicator.py:366, layernorm.py:123: sgl_kernel, an entry); the
 *   qkv_proj F.linear and qkv.split (ATen, 2; models/qwen3_moe.py:434-
 *   435); RoPE with the fused KV-cache store (an entry, :437-452); the
 *   RadixAttention call into the backend's prefill kernel (an entry) with
 *   its output's view and allocation (ATen, 2); o_proj's F.linear (ATen,
 *   :487); prepare_mlp's fused_add_rmsnorm (an entry, communicator.py:487):
 *   4 entries, 5 ATen;
 * - qk_norm: _apply_qk_norm's two RMSNorms (entries) and the reshapes of q
 *   and k around them (ATen, 2);
 * - dense: gate_up_proj and down_proj (F.linear, ATen 2), silu_and_mul (an
 *   entry);
 * - moe: forward_normal's two views and the router's F.linear (ATen 3,
 *   qwen3_moe.py:164-185); fused_topk's output allocations (ATen 3) and its
 *   topk_softmax (an entry, layers/moe/topk.py:1009-1010); fused_experts_
 *   impl's caches (ATen 3, fused_moe_triton/fused_moe.py:452-508),
 *   moe_align_block_size (an entry and its three outputs' allocations,
 *   ATen 3, :517), the two fused_moe_kernel launches and moe_sum_reduce
 *   (Triton, 3, :521, :575-660), silu_and_mul (an entry, :557): 12 ATen,
 *   3 Triton, 3 entries;
 * - tp: the attention's and the MLP's tensor_model_parallel_all_reduce
 *   (entries, 2; communicator.py:778, qwen3_moe.py:180);
 * - step: the embedding, the LM head and the logits' all-gather, the
 *   final norm, the sampler's softmax, sampling and the ids' copy (ATen 7,
 *   entries 2; ESTIMATE of a step's own calls, read as the model's forward
 *   and LogitsProcessor call them).
 * A dense Llama-style layer is attn + dense + tp. The counts leave out
 * Python work that launches nothing (ForwardBatch, the module calls, the
 * communicator's branches, the attention backend's dispatch); the row adds
 * it a layer (python_layer_s) from a measured eager step:
 * - deepspeedai/DeepSpeed PR #8352 (comment of 2026-09-22, "Controlled
 *   Rollout Performance Attribution on NVIDIA H200"): GPT-2, BF16, one
 *   H200, batch 1, 128-token prompt, 32 output tokens, greedy; slime on
 *   SGLang (its release not named): mean latency 156.0 ms eager, 33.2 ms
 *   with SGLang's CUDA graphs. Both run the prefill eagerly, so the 31
 *   decode steps hold the difference: 122.8 / 31 = 3.9613 ms a step, the
 *   eager step's host chain (the graph run's whole step is 33.2 / 32 =
 *   1.04 ms, GPT-2's GPU work less). Less the step's own calls (the step
 *   row's 48 us and GPT-2's position embedding and its add, 2 ATen: 56
 *   us), 12 layers: 325.44 us a layer. A GPT-2 layer as 0.5.6 runs it
 *   (models/gpt2.py:84-180, layers/activation.py:143-150, NewGELU's
 *   forward_native on CUDA too): ln_1, c_attn's F.linear, qkv.chunk, the
 *   attention's KV store (2 index_put) and its q and output views (ATen 4)
 *   and its kernel (an entry), c_proj, the residual add, ln_2, c_fc,
 *   NewGELU's 8 ATen ops (pow, four mul, two add, tanh), c_proj, the add:
 *   21 ATen + 1 entry = 94 us. Python: 325.44 - 94 = 231.44 us a layer
 *   (SGLANG_PYTHON_LAYER_S). ESTIMATE: that release and host stand for
 *   0.5.6's on the rows' hosts, and a Qwen3 or Llama layer, which
 *   makes at least GPT-2's module calls, runs the same Python. SGLang PR
 *   #1401 (docs/serving.md, wave 23: Llama-3-8B at batch 1, SGLang 0.3.0,
 *   an eager decode step 8.23 ms on a Hopper-class host) bounds 0.3.0's
 *   whole eager layer at <= 257 us, under this 78 + 231 us: the 0.3 and
 *   0.4 rows ("sglang") take neither this nor the MLA layer below, one
 *   release rule for both figures (wave 37's merge).
 * An MLA model's eager layer is not counted call by call; the row takes it
 * whole (mla_layer_s), measured: sgl-project/sglang PR #12160 (2025-10-26,
 * SGLang main of the 0.5 line), DeepSeek-V3 at TP8, a prefill of 1 new
 * token logged "forward cost" 82.64 ms eager and 23.10 ms with the step in
 * a CUDA graph, so the eager forward is its host chain (its GPU work at
 * most the graph's 23.1 ms): 82.64 ms / 61 layers = 1.3548 ms a layer
 * (SGLANG_MLA_LAYER_S), the step's own calls and the TP all-reduces folded
 * in. ESTIMATE: its GPU and host not named; every MLA model under the 0.5
 * row ("sglang-0.5", CUDA and ROCm) takes it. The 0.3 and 0.4 rows
 * ("sglang") take none (0): #12160 is the 0.5 line, 0.4.5's MLA prefill
 * path not measured, and at set 13's load (DeepSeek-R1, 0.4.5, H200, 10
 * req/s) it made ITL 1.75x the measured one. SGLang 0.3 is given the 0.5.6
 * count (ESTIMATE: 0.3.0's Llama layer launches the same kernels, read in
 * wave 23). A decode batch above the graph limit (serve_graph_limit.c; 0.5.6's
 * forward_decode, the same layer with the backend's decode kernel in the
 * attention's entry) is given the same chain (ESTIMATE: its calls not
 * counted apart); so is an MLA model's (mla_layer_s).
 *
 * "vllm-0.4" (the vllm-v0.5 row, which stands for 0.4.2 to 0.5.x): vLLM
 * V0 runs a step eagerly where it has prefill tokens, or a decode batch
 * above 256 or past max_seq_len_to_capture (serve_sched.c). Counted in the
 * vllm-0.4.2 wheel (PyPI) for a Qwen2/Llama-style layer's decode at TP1,
 * the calls that reach the dispatcher or launch a kernel. Its custom ops
 * are pybind11 functions of vllm._C (`from vllm._C import ops`), not
 * registered torch ops: each is taken at an ATen op's 4 us (ESTIMATE: one
 * Python binding and one launch, without the dispatcher) and counted
 * with the ATen ops:
 * - attn (models/qwen2.py:138-145, 215-232): input_layernorm's
 *   ops.fused_add_rms_norm (layers/layernorm.py:46-60); qkv_proj's F.linear
 *   (layers/linear.py, UnquantizedLinearMethod.apply) and qkv.split;
 *   rotary_emb's cos_sin_cache.to and ops.rotary_embedding
 *   (layers/rotary_embedding.py:146-155); the backend's forward
 *   (attention/backends/xformers.py, flash_attn.py:181-271: the same decode
 *   path): three views of q, k and v, split_kv_cache's two indexings and
 *   two views (attention/ops/paged_attn.py:52-58), ops.reshape_and_cache,
 *   torch.empty_like, four slices, forward_decode's empty_like, the
 *   v2 kernel's three buffers (a context above 8192 takes v2,
 *   paged_attn.py:108) and ops.paged_attention_v2, the output's slice
 *   assignment (a slice and a copy_) and its view; o_proj's F.linear;
 *   post_attention_layernorm's ops.fused_add_rms_norm: 28;
 * - dense: gate_up_proj and down_proj (F.linear, 2), SiluAndMul's
 *   torch.empty and ops.silu_and_mul (layers/activation.py:31-35): 4;
 * - tp: each RowParallelLinear's all-reduce outside a graph, the custom
 *   kernel's all_reduce_unreg (an empty_like and its call), two a layer: 4;
 * - step: the embedding and the final norm (the rest of the step, its
 *   logits and sampler, runs eagerly in either mode: the row's CPU time).
 * Not counted: the module calls' Python (no measured eager vLLM 0.4 step
 * was found: python_layer_s 0, so the chain is a lower bound), 0.4.2's
 * fused MoE's calls (moe 0), q/k norms (no 0.4.2 model has them).
 *
 * "vllm-0.7" (the vllm-v0 row, which stands for 0.6.0 to 0.8.5): the same V0
 * rule (a step with prefill tokens, a decode batch above its graphs, or a
 * decode past max_seq_len_to_capture runs eagerly; serve_sched.c). Counted in
 * the vllm-0.7.3 wheel (PyPI; paths under vllm/), a decode as V0 runs it with
 * compilation level 0 (V0's default: support_torch_compile leaves the model
 * eager). Its custom ops are registered torch ops (torch.ops._C.*, _custom_ops.
 * py): each is taken as an entry (10 us), the dispatcher's; an op registered
 * with a Python body (torch.ops.vllm.*: unified_attention, all_reduce,
 * inplace_fused_experts) is one entry more around the calls its body makes.
 * A Llama/Qwen2-style layer with the FLASH_ATTN backend:
 * - attn: input_layernorm's fused_add_rms_norm (an entry); qkv_proj's F.linear
 *   and qkv.split (ATen 2); rotary_emb's cos_sin_cache.to and rotary_embedding
 *   (ATen 1, an entry); Attention.forward (attention/layer.py:151-192: the
 *   output's empty_like, four views, unified_attention_with_output, the
 *   output's view: ATen 6, an entry) and FlashAttentionImpl.forward
 *   (attention/backends/flash_attn.py:645-837: kv_cache[0] and [1] twice,
 *   reshape_and_cache_flash with slot_mapping.flatten(), four slices of the
 *   query and output, flash_attn_with_kvcache with two unsqueeze: ATen 11,
 *   entries 2); o_proj's F.linear (ATen 1); post_attention_layernorm (an
 *   entry): ATen 2 + 1 + 6 + 11 + 1 = 21, entries 6;
 * - qk_norm (Qwen3, 0.8.5): two RMSNorm.forward_cuda (empty_like and rms_norm
 *   each) and the four views around them: ATen 6, entries 2;
 * - dense: gate_up_proj and down_proj (F.linear, 2), SiluAndMul's torch.empty
 *   (ATen 3) and silu_and_mul (an entry);
 * - moe (fused_topk, BF16 experts: model_executor/layers/fused_moe/
 *   fused_moe.py): the view and the router's F.linear (ATen 2); fused_topk's
 *   three buffers, topk_softmax, renormalize's sum and div (ATen 5, an entry);
 *   fused_experts' inplace_fused_experts op (an entry, :1092-1109) and in it
 *   fused_experts_impl's three caches (ATen 3), moe_align_block_size's
 *   sorted_ids, its fill_, expert_ids and num_tokens_post_pad (ATen 4,
 *   :585-598) and ops.moe_align_block_size (an entry, E < 224: :617-618), two
 *   fused_moe_kernel launches (Triton 2), silu_and_mul and moe_sum (entries
 *   2), two views (ATen 2): ATen 16, Triton 2, entries 5;
 * - tp: tensor_model_parallel_all_reduce as GroupCoordinator.all_reduce runs it
 *   (distributed/parallel_state.py:109-114, 287-310: torch.ops.vllm.all_reduce,
 *   an entry) into CustomAllreduce.all_reduce (device_communicators/
 *   custom_all_reduce.py:259-275: empty_like and ops.all_reduce), two a layer:
 *   ATen 2, entries 4;
 * - step: the embedding's F.embedding and its view, the final norm (ATen 2,
 *   an entry; the logits and the sampler are the row's CPU time, as for 0.4).
 * A DeepSeek-V2/V3 MLA layer (block-FP8 weights, absorbed, the Triton MLA
 * backend: platforms/cuda.py:159-161), each block-FP8 Linear as
 * apply_w8a8_block_fp8_linear (model_executor/layers/quantization/utils/
 * fp8_utils.py:34-80: the input's view, per_token_group_quant_fp8's
 * empty_like and empty (and the scales' permute on CUTLASS's path) and its
 * Triton kernel, the GEMM's output, the result's view): where both weight
 * dimensions are multiples of 128 cutlass_scaled_mm (ATen 6, Triton 1, an
 * entry), else (kv_a_proj_with_mqa's N = 576) w8a8_block_fp8_matmul, a Triton
 * kernel (ATen 5, Triton 2); apply_fp8_linear_generic (W_Q_UK, W_UV_O)
 * counted as the latter with its reshapes (ATen 6, Triton 2):
 * - mla: input_layernorm (an entry); q_a_proj (CUTLASS); q_a_layernorm
 *   (empty_like, rms_norm); kv_a_proj_with_mqa (Triton), its split,
 *   kv_c.contiguous(), kv_a_layernorm (ATen 3, an entry;
 *   models/deepseek_v2.py:454-470); unified_attention (an entry) into
 *   MLACommonImpl.forward (attention/backends/mla/utils.py:419-475):
 *   k_pe.unsqueeze, W_Q_UK and its view (ATen 8, Triton 2), W_QR's matmul and
 *   view (ATen 2), DeepseekScalingRotaryEmbedding's 13 kernels
 *   (serve_mla_kernels_v07.c) and the four rot/pass slices (ATen 17),
 *   concat_and_cache_mla with its squeeze and flatten (ATen 2, an entry);
 *   TritonMLAImpl._forward_decode (triton_mla.py:698-746): torch.cat,
 *   torch.zeros, attn_logits' empty and two views (ATen 5), the two Triton
 *   kernels of decode_attention_fwd; _v_up_proj_and_o_proj's flatten and
 *   W_UV_O (ATen 7, Triton 2); post_attention_layernorm (an entry):
 *   ATen 56, Triton 9, entries 7;
 * - mla_moe: DeepseekV2MoE.forward (deepseek_v2.py:155-171): the view; the
 *   shared expert's MLP (mla_dense); the gate's F.linear; grouped_topk
 *   (torch.compile'd, fused_moe.py:921-976: its 8 Inductor kernels launched
 *   from Python, taken as Triton 8); inplace_fused_experts (an entry) with its
 *   three caches, moe_align_block_size's four buffers and the cumsum zeros
 *   (ATen 5) and, at E = 256, sgl_moe_align_block_size (an entry), each GEMM's
 *   input quantization (ATen 2, Triton 1, twice) and fused_moe_kernel (Triton
 *   2), silu_and_mul and moe_sum (entries 2), three views; the routed output
 *   times routed_scaling_factor, the shared output added and the final view
 *   (ATen 3): ATen 1 + 13 + 1 + 15 + 3 = 33, Triton 2 + 12 = 14, entries
 *   3 + 4 = 7 (E = 256's count; DeepSeek-V2's E = 160 and K2's 384 take other
 *   alignment paths, :599-618, not counted apart);
 * - mla_dense: DeepseekV2MLP, gate_up_proj and down_proj (CUTLASS, each ATen
 *   6, Triton 1, an entry) and SiluAndMul (ATen 1, an entry): ATen 13,
 *   Triton 2, entries 3.
 * The layers' Python that launches nothing is not counted (python_layer_s 0:
 * no measured eager vLLM 0.6-0.8 step was found), so the chain is a lower
 * bound.
 */
#include "serve/serve_eager.h"
#include <stddef.h>
#include <string.h>
#include "serve/serve_mla_kernels.h"

/* #8352's eager decode step less its graph step over 31 steps, less the step's 56 us, over 12 layers, less a GPT-2
 * layer's 21 ATen + 1 entry at 4 and 10 us (above): 325.44 - 94 = 231.44 us. */
#define SGLANG_PYTHON_LAYER_S (((156.0e-3 - 33.2e-3) / 31.0 - 56e-6) / 12.0 - 94e-6)
#define SGLANG_MLA_LAYER_S (82.64e-3 / 61.0) /* #12160's eager DeepSeek-V3 forward over its 61 layers */

/* The 0.5.6 count above. sglang-0.5 with #8352's Python and #12160's MLA layer, both measured on releases after
 * 0.4; sglang (the 0.3 and 0.4 rows) with neither, by the same release rule for both figures (and #1401 bounds
 * 0.3.0's whole eager layer at <= 257 us, under 78 + 231 us). */
#define SGLANG_ROW(row, python, mla)                                                                                   \
    {.name = row,                                                                                                  \
     .attn = {5, 0, 4},                                                                                            \
     .qk_norm = {2, 0, 2},                                                                                         \
     .dense = {2, 0, 1},                                                                                           \
     .moe = {12, 3, 3},                                                                                            \
     .tp = {0, 0, 2},                                                                                              \
     .step = {7, 0, 2},                                                                                            \
     .python_layer_s = python,                                                                                         \
     .mla_layer_s = mla}

static const strata_serve_eager rows[] = {
    SGLANG_ROW("sglang", 0, 0),
    SGLANG_ROW("sglang-0.5", SGLANG_PYTHON_LAYER_S, SGLANG_MLA_LAYER_S),
    {.name = "vllm-0.4",
     .attn = {28, 0, 0},
     .qk_norm = {0, 0, 0},
     .dense = {4, 0, 0},
     .moe = {0, 0, 0},
     .tp = {4, 0, 0},
     .step = {2, 0, 0},
     .python_layer_s = 0,
     .mla_layer_s = 0},
    {.name = "vllm-0.7",
     .attn = {21, 0, 6},
     .qk_norm = {6, 0, 2},
     .dense = {3, 0, 1},
     .moe = {16, 2, 5},
     .tp = {2, 0, 4},
     .step = {2, 0, 1},
     .python_layer_s = 0,
     .mla_layer_s = 0,
     .mla = {56, 9, 7},
     .mla_moe = {33, 14, 7},
     .mla_dense = {13, 2, 3}},
};

const strata_serve_eager *strata_serve_eager_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

double strata_serve_eager_calls_s(strata_serve_eager_calls c)
{
    return c.aten * strata_serve_mla_host_call_s(SERVE_MLA_ATEN) +
           c.triton * strata_serve_mla_host_call_s(SERVE_MLA_TRITON) +
           c.entry * strata_serve_mla_host_call_s(SERVE_MLA_ENTRY);
}

static bool calls_any(strata_serve_eager_calls c) { return c.aten || c.triton || c.entry; }

double strata_serve_eager_host(const strata_serve_eager *r, const strata_serve_model *m, uint32_t moe_layers,
                               uint32_t tp)
{
    if (!r)
        return 0;
    bool mla = m->kv_lora_rank > 0;
    if (mla && (r->mla_layer_s > 0 || !calls_any(r->mla)))
        return r->mla_layer_s * m->layers;
    uint32_t moe = moe_layers < m->layers ? moe_layers : m->layers;
    double layer = strata_serve_eager_calls_s(mla ? r->mla : r->attn) +
                   (tp > 1 ? strata_serve_eager_calls_s(r->tp) : 0) +
                   (!mla && m->qk_norm ? strata_serve_eager_calls_s(r->qk_norm) : 0) + (mla ? 0 : r->python_layer_s);
    return layer * m->layers + strata_serve_eager_calls_s(mla ? r->mla_moe : r->moe) * moe +
           strata_serve_eager_calls_s(mla ? r->mla_dense : r->dense) * (m->layers - moe) +
           strata_serve_eager_calls_s(r->step);
}
