/*
 * serve_piecewise.c: vLLM V1's piecewise CUDA graphs' host chain
 * (serve_piecewise.h), read in the vllm-0.10.1.1 sdist (PyPI, the release
 * serving held-out set 15 runs):
 *
 * - The mode: with no --compilation-config and no --enforce-eager, V1 at
 *   compilation level PIECEWISE takes cudagraph_mode PIECEWISE
 *   (vllm/config/__init__.py:3552-3558; config/compilation.py:226-238,
 *   "PIECEWISE. (v1 default)"); the split is at the attention ops
 *   (compilation.py:533-547, set_splitting_ops_for_v1: splitting_ops =
 *   _attention_ops). FULL_AND_PIECEWISE exists at this release
 *   (compilation.py:249-252) but only when asked for.
 * - The eager op, per layer: unified_attention_with_output (a custom op
 *   registered directly with torch.Library: one ENTRY) calls
 *   FlashAttentionImpl.forward (vllm/v1/attention/backends/flash_attn.py:
 *   430-556), whose own comment says it "is executed in eager-mode PyTorch"
 *   under piecewise graphs (:468-474). At decode it launches
 *   reshape_and_cache_flash (:500-509, a C++ custom op through the
 *   dispatcher: one ATEN) and flash_attn_varlen_func (:533-555; on Ampere
 *   FlashAttention-2, attention/utils/fa_utils.py:36, through
 *   torch.ops._vllm_fa2_C.varlen_fwd, vllm_flash_attn/flash_attn_interface.py
 *   :176: one ATEN). Its views
 *   (kv_cache.unbind, the [:num_actual_tokens] slices, the three descale
 *   .expand) launch nothing and are not counted: the chain is a lower
 *   bound of the op's host time.
 * - The next piece's replay, one a layer, and the first piece's, one a
 *   step: CUDAGraphWrapper.__call__'s replay (vllm/compilation/cuda_graph.py
 *   :106-192) under the piecewise backend (cuda_piecewise_backend.py:86),
 *   taken at an ENTRY's
 *   figure (ESTIMATE, as serve_mla_kernels.c takes it).
 * The kinds' host times are serve_mla_kernels.c's (ATEN 4 us,
 * pytorch/pytorch#82793; ENTRY 10 us, pytorch/pytorch#139500 as
 * NVIDIA/cudnn-frontend PR #308 quotes it): 28 us a layer.
 *
 * Above the largest captured size (the same sdist):
 * - The rule: execute_model pads a step to a captured size only where
 *   num_scheduled_tokens <= cudagraph_batch_sizes[-1], else "Eager mode"
 *   with the step's own count (v1/worker/gpu_model_runner.py:1524-1540);
 *   PiecewiseBackend.__call__ runs compiled_graph_for_general_shape for a
 *   shape it has no entry for (compilation/cuda_piecewise_backend.py:92-96),
 *   Inductor's code for a symbolic token count, with no graph.
 * - The sizes: with no cuda_graph_sizes, [min(max_num_seqs * 2, 512)]
 *   (config/scheduler.py:239-244), expanded to [1, 2, 4] + range(8, that
 *   + 1, 8) and the sizes above max_num_batched_tokens dropped
 *   (config/__init__.py:3764-3785). vllm-0.8.4 (sdist) captures up to 512
 *   whatever max_num_seqs (vllm/config.py:3834-3843): the two agree at
 *   max_num_seqs >= 256; below it this follows 0.10.
 * - What Inductor compiles: under V1 at PIECEWISE with Inductor the custom
 *   ops are off (model_executor/custom_op.py:135-146), so RMSNorm,
 *   SiluAndMul and RoPE are traced as their forward_native (layers/
 *   layernorm.py:118-154, activation.py:76-79, rotary_embedding/base.py:
 *   60-92), and V1 runs none of vLLM's own passes (config/compilation.py:
 *   78-88: enable_fusion and enable_noop off under V1; fusion passes only
 *   where asked, compilation/pass_manager.py:54-72). Read against a Llama/
 *   Qwen2 layer (models/llama.py:92-96, 188-198, 285-310), a piece from one
 *   attention op to the next launches: the o_proj, gate_up, down and qkv
 *   GEMMs (extern_kernels.mm, or addmm with Qwen2's bias: 4 ATen); the
 *   residual add fused into each RMSNorm's reduction (2 Triton: post-
 *   attention, and the next layer's input norm or the final norm); SiluAndMul
 *   (1 Triton); RoPE's gather of cos_sin_cache and rotation, one kernel for
 *   q and one for k (their sizes differ under GQA; 2 Triton); the zeroed
 *   output the attention op writes (attention/layer.py:243-245,
 *   torch.zeros: 1 Triton, 0.10; 0.8.4 allocates it with torch.empty,
 *   attention/layer.py:189, and launches none): 4 ATen, 6 Triton. ESTIMATE
 *   of Inductor's grouping (no generated code read): a pointwise chain and
 *   the reduction it feeds are one kernel; kernels of different sizes and
 *   no shared reads are not fused (its default, no combo kernels).
 * - With it, per layer: the attention op's calls as within the sizes (2
 *   ATen, its entry) and the next piece's call (an entry, as a replay):
 *   6 ATen, 6 Triton, 2 entries = 24 + 66 + 20 = 110 us. At tp > 1 the two
 *   all-reduces, torch.ops.vllm.all_reduce (an entry, distributed/
 *   parallel_state.py:345-368) into the custom all-reduce's empty_like and
 *   ops.all_reduce (an ATen, an entry; device_communicators/
 *   custom_all_reduce.py:229-245, cuda_communicator.py:93-118): ATen 2,
 *   entries 4, as serve_eager.c's "vllm-0.7" tp row. A Qwen3 layer's q and
 *   k norms: 2 Triton more (ESTIMATE: each a reduction the rotation, which
 *   reads other elements of the head, cannot join). An MoE layer runs its
 *   experts in a registered op (vllm.moe_forward) that launches its kernels
 *   from Python: its MLP's 2 ATen and 1 Triton become serve_eager.c's
 *   "vllm-0.7" moe count (0.7.3's fused MoE, the router's linear in it;
 *   ESTIMATE for 0.10's).
 * - The step: the first piece's call (an entry) and its embedding gather
 *   fused into the first input norm (1 Triton); at tp > 1 the vocabulary-
 *   parallel embedding's masked gather and its all-reduce come between
 *   them (2 Triton, an ATen, 3 entries).
 * The Python the pieces run around their launches (Inductor's wrapper, the
 * guards) is not counted: the chain is a lower bound.
 */
/*
 * Under attention data parallelism (same sdist): each DP rank is its own
 * engine core (DPEngineCoreProc, v1/engine/core.py:933-1060) with its own
 * model runner, and execute_model tests ITS OWN
 * scheduler_output.total_num_scheduled_tokens against
 * cudagraph_batch_sizes[-1] (gpu_model_runner.py:1524-1540) before the DP
 * padding (:1542-1544): get_dp_padding (:1436-1459) all-reduces the ranks'
 * counts (forward_context.py:72-85) and pads every rank to the largest, so
 * where one rank runs eager the others run padded to its general shape
 * too. strata splits a step's tokens evenly (serve_cost.c, ceil(T / dp)),
 * so the largest rank's share is the one every rank's test gives.
 */
#include "serve/serve_piecewise.h"
#include "serve/serve_mla_kernels.h"

#define CAPTURE_CEILING 512u /* config/scheduler.py:244, min(max_num_seqs * 2, 512) */

strata_serve_eager_calls strata_serve_piecewise_layer_calls(void)
{
    /* reshape_and_cache_flash, flash_attn_varlen_func; the op's entry, the next piece's replay */
    return (strata_serve_eager_calls){.aten = 2, .triton = 0, .entry = 2};
}

strata_serve_eager_calls strata_serve_piecewise_step_calls(void)
{
    /* the first piece's replay */
    return (strata_serve_eager_calls){.aten = 0, .triton = 0, .entry = 1};
}

double strata_serve_piecewise_host(const strata_serve_model *m, bool rocm)
{
    if (rocm || m->kv_lora_rank > 0 || !m->layers)
        return 0;
    return strata_serve_eager_calls_s(strata_serve_piecewise_layer_calls()) * m->layers +
           strata_serve_eager_calls_s(strata_serve_piecewise_step_calls());
}

uint32_t strata_serve_piecewise_capture_max(uint32_t max_num_seqs, uint32_t max_num_batched_tokens)
{
    uint64_t twice = 2ull * max_num_seqs, last = twice < CAPTURE_CEILING ? twice : CAPTURE_CEILING;
    uint32_t largest = 0;
    for (uint32_t s = 1; s <= 4; s *= 2) /* [1, 2, 4] */
        if (s <= max_num_batched_tokens)
            largest = s;
    for (uint32_t s = 8; s <= last && s <= max_num_batched_tokens; s += 8) /* + range(8, last + 1, 8) */
        largest = s;
    return largest;
}

uint64_t strata_serve_piecewise_step_limit(uint32_t capture, uint32_t dp)
{
    return (uint64_t)capture * (dp ? dp : 1); /* ceil(T / dp) <= capture <=> T <= dp x capture */
}

strata_serve_eager_calls strata_serve_piecewise_inductor_layer_calls(uint32_t tp, bool qk_norm)
{
    /* 4 GEMMs, 2 attention launches; 2 add + RMSNorm, SiluAndMul, RoPE's q and k, the zeroed output; the op's
     * entry and the next piece's call */
    strata_serve_eager_calls c = {.aten = 6, .triton = 6, .entry = 2};
    if (tp > 1) { /* two all-reduces: each the op's entry, empty_like and ops.all_reduce */
        c.aten += 2;
        c.entry += 4;
    }
    if (qk_norm)
        c.triton += 2;
    return c;
}

double strata_serve_piecewise_inductor_host(const strata_serve_model *m, uint32_t moe_layers, uint32_t tp,
                                            bool rocm)
{
    if (rocm || m->kv_lora_rank > 0 || !m->layers)
        return 0;
    uint32_t moe = moe_layers < m->layers ? moe_layers : m->layers;
    const strata_serve_eager *v07 = strata_serve_eager_find("vllm-0.7");
    /* an MoE layer: its MLP's gate_up and down GEMMs and SiluAndMul give way to the fused-MoE op's calls */
    double mlp = strata_serve_eager_calls_s((strata_serve_eager_calls){.aten = 2, .triton = 1, .entry = 0});
    double step = strata_serve_eager_calls_s(tp > 1 ? (strata_serve_eager_calls){.aten = 1, .triton = 2, .entry = 3}
                                                    : (strata_serve_eager_calls){.aten = 0, .triton = 1, .entry = 1});
    return strata_serve_eager_calls_s(strata_serve_piecewise_inductor_layer_calls(tp, m->qk_norm)) * m->layers +
           (strata_serve_eager_calls_s(v07->moe) - mlp) * moe + step;
}
