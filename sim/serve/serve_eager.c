/*
 * serve_eager.c: the host chain of an eager forward (serve_eager.h), one
 * row an engine whose layers were counted, named by its engine rows.
 *
 * "sglang" (the sglang-v0.3, -v0.4 and -v0.5 rows): a step with prefill tokens runs
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
 * Python work that launches nothing (ForwardBatch and the communicator's
 * branches), so the chain is a lower bound. SGLang 0.3 is given the 0.5.6
 * count (ESTIMATE: 0.3.0's Llama layer launches the same kernels, read in
 * wave 23). A decode batch above the graph limit (serve_graph_limit.c; 0.5.6's
 * forward_decode, the same layer with the backend's decode kernel in the
 * attention's entry) is given the same chain (ESTIMATE: its calls not
 * counted apart). MLA models (DeepSeek's prefill layer) are not counted: 0.
 */
#include "serve/serve_eager.h"
#include <stddef.h>
#include <string.h>
#include "serve/serve_mla_kernels.h"

static const strata_serve_eager rows[] = {
    {"sglang", .attn = {5, 0, 4}, .qk_norm = {2, 0, 2}, .dense = {2, 0, 1}, .moe = {12, 3, 3}, .tp = {0, 0, 2},
     .step = {7, 0, 2}},
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

double strata_serve_eager_host(const strata_serve_eager *r, const strata_serve_model *m, uint32_t moe_layers,
                               uint32_t tp)
{
    if (!r || m->kv_lora_rank > 0)
        return 0;
    uint32_t moe = moe_layers < m->layers ? moe_layers : m->layers;
    double layer = strata_serve_eager_calls_s(r->attn) + (tp > 1 ? strata_serve_eager_calls_s(r->tp) : 0) +
                   (m->qk_norm ? strata_serve_eager_calls_s(r->qk_norm) : 0);
    return layer * m->layers + strata_serve_eager_calls_s(r->moe) * moe +
           strata_serve_eager_calls_s(r->dense) * (m->layers - moe) + strata_serve_eager_calls_s(r->step);
}
