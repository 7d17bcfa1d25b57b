/*
 * serve_mla_prefill_v1.h: what vLLM V1's MLA backend (MLACommonImpl, vllm/v1/attention/backends/mla/common.py) runs
 * in a DeepSeek-V3/R1 prefill chunk beyond serve_cost.c's kv_b up-projection of the chunk's whole context and its one
 * flash op (issue 45, wave 49). Read in the vllm-0.8.4 PyPI wheel (vllm-0.8.4-cp38-abi3-manylinux1_x86_64.whl; paths
 * under vllm/, lines that tree's); the engine row's mla_prefill_v1 (vllm-v1, no --engine) takes it. A chunk of t new
 * tokens whose request has `context` keys in all, prior = context - t of them in the paged cache already:
 *
 * - RoPE on CUDA is RotaryEmbedding.forward_cuda (common.py:618-622 takes it over forward_native on CUDA;
 *   DeepseekScalingRotaryEmbedding overrides forward only, so model_executor/layers/rotary_embedding.py:155-181's
 *   ops.rotary_embedding runs, one fused kernel): prefill_q_pe.contiguous() (a copy of the strided t x heads x rope
 *   slice of q), the kernel (reads the t cos/sin rows, reads and writes q_pe and k_pe), and the result assigned back
 *   into q (prefill_q_pe[...] = ..., a copy; k_pe is rotated in place, its assignment is to itself) (common.py:
 *   910-915). Not on ROCm (forward_native's PyTorch ops there: not priced here).
 * - ops.concat_and_cache_mla (common.py:919-926) writes the chunk's latent and k_pe (t x (kv_lora + rope), read in the
 *   activations' dtype) into the paged cache in its dtype.
 * - _forward_prefill (:788-844) and, where prior > 0, _compute_prefill_context (:711-786): k = torch.cat(k_nope,
 *   k_pe.expand) over the new tokens (:804) and over the gathered context (:747), together reading context x heads x
 *   nope and context x rope and writing context x heads x (nope + rope); v padded with zeros to q's width over both
 *   (:808-809, :751-753), where pad_v; ops.gather_cache (:728-735) copies the prior tokens' cache rows into the
 *   workspace (in the model's dtype); merge_attn_states (:830-835; vllm/attention/ops/merge_attn_states.py: the CUDA
 *   kernel for bf16/fp16, else Triton) reads the prefix and suffix outputs (t x heads x the output's width) and their
 *   fp32 log-sum-exps and writes one output; the output's [..., :v] slice reshaped (:839-841), a copy of t x heads x v,
 *   where pad_v. kv_b_proj over new and gathered tokens (:799, :742: context rows in all) and the two flash calls
 *   (causal over the new tokens, :811-822; unmasked over the prior ones, :756-767: together the caller's one op over
 *   t queries and context keys) are serve_cost.c's.
 * - One _forward_prefill runs every prefill token of the step (varlen, cu_seqlens over the requests): each kernel
 *   above is launched once a step over the chunks' sums (strata_serve_mla_v1_step_s); the merge covers every prefill
 *   token where any has prior context (has_context, :798, :824-835), the gather the prior tokens of all.
 * - The context is gathered in chunks of the workspace, min(max(8 max_model_len, 4 max_num_seqs block_size), 128 Ki)
 *   tokens (:354-368) shared equally among the step's prefills with context (:492-494): one iteration where prior
 *   fits that share (DeepSeek-R1 at max_model_len 163,840: 131,072 tokens a step), the case priced here; more
 *   iterations merge again (:775-784): not priced.
 *
 * Whether v is padded: vLLM 0.8.0-0.8.4 pad always, in V1 (above) and V0 (vllm/attention/backends/mla/common.py:
 * 1181-1183, 1257-1258 at 0.8.4); _pad_v ("We don't need to pad V if we are on a hopper system with FA3") came in
 * 0.8.5 (vllm-0.8.5 wheel, vllm/v1/attention/backends/mla/common.py:650-652, attention/backends/mla/common.py:1077),
 * serve_release.c's mla_pad_v row. V1 with no --engine-release takes 0.8.5's rule (the row covers later releases).
 *
 * Each kernel's bytes: read and written once, as serve_pass.h's pass prices them (its launch, its bytes).
 * Invariants: every time is >= 0 and 0 for no tokens; pure functions of their arguments.
 */
#ifndef STRATA_SERVE_MLA_PREFILL_V1_H
#define STRATA_SERVE_MLA_PREFILL_V1_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "serve/serve_pass.h"
#include "workload/model_config.h"

/* One prefill chunk on one rank: t new tokens, context keys in all (context >= t), heads a rank, the widths, and the
 * bytes of an activation and of a cache element. */
typedef struct {
    uint64_t tokens, context, heads, nope, rope, v, kv_lora;
    double act, kv_bytes;
    bool pad_v;      /* v padded to nope + rope (strata_serve_mla_v1_pads_v) */
    bool fused_rope; /* CUDA: forward_cuda's one kernel and its two copies; false (ROCm): RoPE not priced here */
} strata_serve_mla_v1_chunk;

/* One layer's kernels above on the chunk (the sum of pass's times). */
double strata_serve_mla_v1_prefill_passes_s(strata_serve_pass_fn pass, const void *ctx,
                                            const strata_serve_mla_v1_chunk *ch);

/* The same over a step's prefills, batched as V1 runs them (one _forward_prefill over every prefill token): tokens
 * and contexts the chunks' sums, the widths from the model's shape s (kv_lora_rank > 0). */
double strata_serve_mla_v1_step_s(strata_serve_pass_fn pass, const void *ctx, const strata_model_shape *s,
                                  uint64_t tokens, uint64_t contexts, uint64_t heads, double act, double kv_bytes,
                                  bool pad_v, bool fused_rope);

/* Whether V1's MLA prefill pads v on hw under --engine-release's mla_pad_v row (NULL: none given: 0.8.5's rule,
 * "unless-fa3-hopper"). */
bool strata_serve_mla_v1_pads_v(const char *release_row, const strata_hw *hw);

#endif
