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
 * sglang-0.4-flashinfer: SGLang 0.4.0 (its PyPI wheel, tag v0.4.0) with
 *   FlashInfer, the default attention backend where FlashInfer is
 *   installed (server_args.py:185-188): the same kernels, moved to
 *   srt/layers/attention/flashinfer_backend.py. LlamaAttention still calls
 *   vLLM's get_rope (srt/models/llama.py:149-173); forward_decode and the
 *   paged forward_extend store k and v with set_kv_buffer (memory_pool.py:
 *   216-233, the two index_put writes) and pass q.contiguous()
 *   (flashinfer_backend.py:237-292); the ragged path passes q, k and v
 *   through .contiguous() and writes the cache after. What moved is the
 *   ragged choice: init_forward_metadata takes it when the step's
 *   extend_num_tokens (its prefill tokens, not their contexts) is 4096 or
 *   more (flashinfer_backend.py:144, one wrapper: no sliding window).
 */
#include "serve/serve_attn_aux.h"
#include "core/error.h"
#include "serve/serve_names.h"

/* SGLang 0.3.0's ragged prefill threshold (forward_batch_info.py:
 * `int(torch.sum(ret.seq_lens)) > 4096`). */
enum { SGLANG_V03_RAGGED_ABOVE = 4096 };
/* SGLang 0.4.0's (flashinfer_backend.py:144: `extend_num_tokens >= 4096`). */
enum { SGLANG_V04_RAGGED_ABOVE = 4095 };

static const strata_serve_aux_pass vllm_v06[] = {
    {"rotary_embedding (in place on q and k)", SERVE_AUX_ALL, 1, 1, false, 0, false},
    {"reshape_and_cache_flash (k and v into the cache)", SERVE_AUX_ALL, 0, 2, true, 0, false},
    {"output[:num_prefill_tokens] = out", SERVE_AUX_PREFILL, 1, 0, false, 0, false},
    {"output[num_prefill_tokens:] = flash_attn_with_kvcache(...)", SERVE_AUX_DECODE, 1, 0, false, 0, false},
};

static const strata_serve_aux_pass sglang_v03[] = {
    {"rotary_embedding (vLLM's, in place on q and k)", SERVE_AUX_ALL, 1, 1, false, 0, false},
    {"k_buffer[layer_id][loc] = cache_k", SERVE_AUX_ALL, 0, 1, true, 0, false},
    {"v_buffer[layer_id][loc] = cache_v", SERVE_AUX_ALL, 0, 1, true, 0, false},
    {"q.contiguous() (decode)", SERVE_AUX_DECODE, 1, 0, false, 0, false},
    {"q.contiguous() (prefill)", SERVE_AUX_PREFILL, 1, 0, false, 0, false},
    {"k.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V03_RAGGED_ABOVE, false},
    {"v.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V03_RAGGED_ABOVE, false},
};

static const strata_serve_aux_pass sglang_v04[] = {
    {"rotary_embedding (vLLM's, in place on q and k)", SERVE_AUX_ALL, 1, 1, false, 0, false},
    {"k_buffer[layer_id][loc] = cache_k", SERVE_AUX_ALL, 0, 1, true, 0, false},
    {"v_buffer[layer_id][loc] = cache_v", SERVE_AUX_ALL, 0, 1, true, 0, false},
    {"q.contiguous() (decode)", SERVE_AUX_DECODE, 1, 0, false, 0, false},
    {"q.contiguous() (prefill)", SERVE_AUX_PREFILL, 1, 0, false, 0, false},
    {"k.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V04_RAGGED_ABOVE, true},
    {"v.contiguous() (ragged prefill)", SERVE_AUX_PREFILL, 0, 1, false, SGLANG_V04_RAGGED_ABOVE, true},
};

static const strata_serve_attn_aux rows[] = {
    {"vllm-0.6-flash-attn", vllm_v06, G_N_ELEMENTS(vllm_v06)},
    {"sglang-0.3-flashinfer", sglang_v03, G_N_ELEMENTS(sglang_v03)},
    {"sglang-0.4-flashinfer", sglang_v04, G_N_ELEMENTS(sglang_v04)},
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
    if (p->above && (p->above_tokens ? prefill : context) <= p->above)
        tokens = 0;
    out.elements = tokens * ((uint64_t)p->q * q_heads + (uint64_t)p->kv * kv_heads) * head_dim;
    out.bytes = (double)out.elements * (act + (p->to_cache ? cache : act));
    return out;
}
