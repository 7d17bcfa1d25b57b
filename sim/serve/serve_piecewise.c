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
 */
#include "serve/serve_piecewise.h"
#include "serve/serve_mla_kernels.h"

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
