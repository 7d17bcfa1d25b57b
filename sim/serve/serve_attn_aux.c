/*
 * serve_attn_aux.c: the auxiliary attention kernels' rows
 * (serve_attn_aux.h), read from the engines' own sources.
 *
 * vllm-0.6-flash-attn: vLLM 0.6.0 (its PyPI wheel, vllm-project/vllm@32e7db25)
 *   with the FLASH_ATTN backend, Llama's layer as LlamaAttention.forward
 *   runs it (model_executor/models/llama.py): q, k and v are views of the
 *   QKV GEMM's output (qkv.split); RotaryEmbedding.forward_cuda
 *   (model_executor/layers/rotary_embedding.py) calls ops.rotary_embedding,
 *   in place on q and k, every token; FlashAttentionImpl.forward
 *   (attention/backends/flash_attn.py) writes k and v into the paged cache
 *   with ops.reshape_and_cache_flash, every token, then runs the prefills'
 *   flash_attn_varlen_func and copies its result into a preallocated
 *   output (`output[:num_prefill_tokens] = out`), and the decodes'
 *   flash_attn_with_kvcache copied likewise (`output[num_prefill_tokens:]
 *   = ...`): one copy kernel each for the prefill and the decode tokens.
 * sglang-0.3-flashinfer: SGLang 0.3.0 (its PyPI wheel) with FlashInfer:
 *   LlamaAttention.forward (srt/models/llama.py) runs vLLM's rotary
 *   embedding (get_rope, the same in-place kernel); RadixAttention
 *   (srt/layers/radix_attention.py) stores k and v through
 *   MHATokenToKVPool.set_kv_buffer (srt/mem_cache/memory_pool.py:
 *   `k_buffer[layer_id][loc] = cache_k`, then v: two index_put kernels);
 *   decode_forward_flashinfer passes `q.contiguous()` (a copy: q is a view
 *   of the QKV output); extend_forward_flashinfer takes the ragged path
 *   when the batch's sequence lengths sum above 4096
 *   (srt/model_executor/forward_batch_info.py, flashinfer_use_ragged),
 *   passing q, k and v each through .contiguous(), else the paged path,
 *   q alone. (With a cached prefix the ragged path also runs the paged
 *   kernel and merge_state: not in this row.)
 */
#include "serve/serve_attn_aux.h"
#include "core/error.h"
#include "serve/serve_names.h"

/* SGLang 0.3.0's ragged prefill threshold (forward_batch_info.py:
 * `int(torch.sum(ret.seq_lens)) > 4096`). */
enum { SGLANG_V03_RAGGED_ABOVE = 4096 };

static const strata_serve_aux_pass vllm_v06[] = {
    {"rotary_embedding (in place on q and k)", SERVE_AUX_ALL, 1, 1, false, 0},
    {"reshape_and_cache_flash (k and v into the cache)", SERVE_AUX_ALL, 0, 2, true, 0},
    {"output[:num_prefill_tokens] = out", SERVE_AUX_PREFILL, 1, 0, false, 0},
    {"output[num_prefill_tokens:] = flash_attn_with_kvcache(...)", SERVE_AUX_DECODE, 1, 0, false, 0},
};

static const strata_serve_aux_pass sglang_v03[] = {
    {"rotary_embedding (vLLM's, in place on q and k)", SERVE_AUX_ALL, 1, 1, false, 0},
    {"k_buffer[layer_id][loc] = cache_k", SERVE_AUX_ALL, 0, 1, true, 0},
    {"v_buffer[layer_id][loc] = cache_v", SERVE_AUX_ALL, 0, 1, true, 0},
    {"q.contiguous() (decode)", SERVE_AUX_DECODE, 1, 0, false, 0},
    {"q.contiguous() (prefill)", SERVE_AUX_PREFILL, 1, 0, false, 0},
    {"k.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V03_RAGGED_ABOVE},
    {"v.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V03_RAGGED_ABOVE},
};

static const strata_serve_attn_aux rows[] = {
    {"vllm-0.6-flash-attn", vllm_v06, G_N_ELEMENTS(vllm_v06)},
    {"sglang-0.3-flashinfer", sglang_v03, G_N_ELEMENTS(sglang_v03)},
    {NULL, NULL, 0},
};

const strata_serve_attn_aux *strata_serve_attn_aux_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_attn_aux), name, STRATA_ERROR_INTERNAL, err,
                              "unknown attention kernels '%s' (known: %s)");
}

strata_serve_aux_cost strata_serve_attn_aux_pass(const strata_serve_attn_aux *a, uint32_t i, uint64_t prefill,
                                                 uint64_t decode, uint64_t context, uint64_t q_heads,
                                                 uint64_t kv_heads, uint64_t head_dim, double act, double cache)
{
    strata_serve_aux_cost out = {0, 0};
    if (!a || i >= a->n_passes)
        return out;
    const strata_serve_aux_pass *p = &a->passes[i];
    uint64_t tokens = p->tokens == SERVE_AUX_PREFILL ? prefill : p->tokens == SERVE_AUX_DECODE ? decode
                                                                                                 : prefill + decode;
    if (p->above && context <= p->above)
        tokens = 0;
    out.elements = tokens * ((uint64_t)p->q * q_heads + (uint64_t)p->kv * kv_heads) * head_dim;
    out.bytes = (double)out.elements * (act + (p->to_cache ? cache : act));
    return out;
}
