/*
 * serve_engine_apply.c: what acts on an engine row of serve_engine.c's
 * table (serve_engine.h is the API): the kernels it names set on a step's
 * cost model, each taken from the CUDA or the ROCm build by the hardware
 * (strata_serve_engine_set_kernels*, a row CUDA's only refused on AMD
 * hardware); its rule for a request longer than the model allows
 * (strata_serve_engine_lengths); its CPU time and a step's time from it
 * (strata_serve_engine_cpu, _step); vLLM V1's input copies before a
 * forward (strata_serve_engine_input_copies). The rows' own figures and
 * sources are serve_engine.c's; the mechanisms these functions model are
 * cited here.
 *
 * Invariants: a NULL row is the default row (strata_serve_engine_row:
 * vllm-v1); no function writes a row; a step's time is >= its GPU time.
 *
 * On RCCL hardware (vLLM's ROCm builds; decode_rocm) vllm-v0 runs its decodes' attention as ROCm's
 *   paged_attention_rocm (serve_decode.h: paged-attention-rocm), as does vllm-v1 under --prefill-decode-attention
 *   (decode_rocm_pd; else V1's Triton unified_attention, serve_engine.c's vllm_v1): 0.7.3's
 *   ROCmFlashAttentionBackend and 0.10.0's chunked_prefill_paged_decode (VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1, as
 *   AMD's page sets it from 0.9.1) call it
 *   while use_rocm_custom_paged_attention holds (gfx9, fp16/bf16 queries, head 64 or 128, block 16 or 32, GQA ratio
 *   1-16, contexts up to 128 Ki, no window on V1); other shapes run Triton's kernel_paged_attention_2d, not modelled
 *   (the row times them as the ROCm kernel). Their prefill stays the rows' (vllm-v0's FA2 entries, vllm-v1's FA3
 *   bytes): ROCm's CK and Triton prefill kernels are not modelled.
 * On RCCL hardware (SGLang's ROCm build on gfx942; mla_kernels_rocm) sglang-v0.5 runs an MLA model's layer
 *   kernels as serve_mla_rocm.c's sglang-0.5-rocm-mla counts them from SGLang 0.5's HIP branches (RoPE in
 *   PyTorch ops, the q and k concatenations, aiter's MLA reduce), in place of the CUDA row.
 * On RCCL hardware (vLLM's ROCm builds; allreduce_rocm) vllm-v0 and vllm-v1 run vllm-custom-rocm: vLLM's custom
 *   all-reduce below 16 MiB, RCCL beyond, as ROCm/vllm 0.7.3 (V0, @b309ea79) and 0.10.0 (V1, @040de12d) select it
 *   (serve_allreduce.c gives the lines; quick all-reduce is off by default). V1 runs it on CUDA as well
 *   (CudaCommunicator.all_reduce), but the NVIDIA vllm-v1 rows keep NCCL's here: from the release that turns
 *   VLLM_ALLREDUCE_USE_SYMM_MEM on by default, the custom kernel stops at 256 KiB at TP8 on sm90 and PyTorch's
 *   symmetric-memory all-reduce (not modelled) takes over to 64 MiB; earlier V1 releases run it below 8 MiB. The row
 *   names no release (docs/serving.md, "vLLM V1's all-reduce on CUDA (wave 27)"). (vLLM 0.6.2 upstream disables the
 *   custom kernel on ROCm, config.py:926-930 "not supported on AMD GPUs", so its all-reduces are RCCL's; AMD's
 *   ROCm/vllm fork enables it from 2024-05, ROCm/vllm PR #27: which a row's run used is not known, and the row keeps
 *   the fork's; docs/serving.md, wave 41.)
 * On RCCL hardware (vLLM's ROCm builds; fp8_linear_rocm) vllm-v0 and vllm-v0.5 run a per-tensor FP8 model's Linears
 *   as serve_fp8_linear.c's rows: vllm-v0 AMD's fork's (vllm-rocm-fork), vllm-v0.5 upstream 0.6.2's and the fork's
 *   0.4.3_rocm's (vllm-0.6-rocm-scaled-mm); --fp8-linear-rocm picks either (docs/serving.md, wave 42).
 * The vocabulary's collectives of the vLLM and SGLang rows at tp > 1
 *   (vllm-v0, sglang-v0.3, sglang-v0.4, vllm-v1: embed_allreduce and logits_gather;
 *   docs/serving.md, "What vLLM and SGLang run around the vocabulary"):
 *   vLLM's VocabParallelEmbedding.forward masks each rank's rows and calls
 *   tensor_model_parallel_all_reduce ("Reduce across all the model
 *   parallel GPUs"; vllm/model_executor/layers/vocab_parallel_embedding.py,
 *   the vllm-0.6.0 wheel), the engine's all-reduce (vllm-custom on the v0
 *   rows, NCCL's on vllm-v1 here). vLLM 0.6.0's LogitsProcessor._get_logits
 *   gathers the pruned (sampled) rows' logits to rank 0 on every platform
 *   but TPU (use_gather = not current_platform.is_tpu();
 *   tensor_model_parallel_gather -> GroupCoordinator.gather ->
 *   torch.distributed.gather, vllm/distributed/parallel_state.py; on NCCL
 *   torch/csrc/cuda/nccl.cpp gather: the root's ncclRecv from each rank,
 *   their ncclSend, one group): logits_to_root. vLLM v1 all-gathers them
 *   (LogitsProcessor._gather_logits: use_all_gather =
 *   current_platform.use_all_gather(), which the base Platform returns as
 *   envs.VLLM_USE_V1, vllm/platforms/interface.py; CUDA does not override
 *   it). SGLang 0.3.0's LogitsProcessor.forward all-gathers the last
 *   (sampled) rows' logits when tp > 1 (tensor_model_parallel_all_gather,
 *   python/sglang/srt/layers/logits_processor.py, sglang-0.3.0 wheel),
 *   and its LlamaModel's embed_tokens is vLLM 0.5.5's VocabParallelEmbedding
 *   (srt/models/llama.py). The overlap row stands for no one engine: none.
 * vllm-v1's input copies (input_copies, strata_serve_engine_input_copies):
 *   vLLM 0.9.0.1's GPUModelRunner._prepare_inputs (ROCm/vllm@71faa188,
 *   vllm/v1/worker/gpu_model_runner.py:547-651) first commits the
 *   persistent batch's block table, block_table[:num_reqs].copy_(
 *   block_table_cpu[:num_reqs], non_blocking=True) (worker/block_table.py:
 *   82-84), whose rows are cdiv(max_model_len, block_size) int32 wide
 *   (:103-112, MultiGroupBlockTable, one table a KV cache group; the CPU
 *   tensor pinned, :34-39), then copies input_ids (int32 a token),
 *   positions (int64), query_start_loc (int32, num_reqs + 1) and seq_lens
 *   (int32 a request) (:635-651), and the attention builder the slot
 *   mapping (int64 a token; attention/backends/triton_attn.py:73-75,
 *   flash_attn.py:356-358): six non-blocking copies on the stream the
 *   forward is then launched on, so the forward starts after them. Each
 *   is charged one latency of the pinned host link plus its bytes over the
 *   link's bandwidth (the hardware file's figures). The block table is
 *   the part that grows with the batch: 32 KiB a request at max_model_len
 *   131,072 and block 16. The source issues the table's copy first "so we
 *   can overlap the copy with the following CPU operations"; V1's CPU
 *   time is not modelled here (no public figure, docs/serving.md "vLLM
 *   V1's host work per step (wave 32)"), so the copies stand for the
 *   longer of the two, a lower bound. One table a model (no second KV
 *   cache group for sliding-window layers); each rank copies its own over
 *   its own link at the same time.
 * Requests longer than the model allows (serve_engine.h's length rules;
 *   strata's model has one length, max_model_len L):
 *   vLLM rows (none, vllm-v0, overlap, vllm-v1): the published cases' clients
 *   go through vLLM's OpenAI server, which refuses prompt + max_tokens > L
 *   with a 400 before the engine sees it (vllm-0.6.0 wheel, vllm/entrypoints/
 *   openai/serving_engine.py:268-276, OpenAIServing._validate_input: "elif
 *   token_num + request.max_tokens > self.max_model_len: raise ValueError";
 *   serving_completion.py:146-148 answers it with create_error_response).
 *   The V0 scheduler's own check, a prompt over min(L, budget) ignored
 *   (FINISHED_IGNORED, core/scheduler.py:815-824, prompt_limit of
 *   _get_prompt_limit, :751-764), never fires behind it: vllm-v0's budget is
 *   >= L (serve_args.c) and the chunked row's limit is L.
 *   sglang-v0.3: the tokenizer manager refuses a prompt of >= context_len
 *   tokens (sglang-0.3.0 wheel, srt/managers/tokenizer_manager.py:418-423,
 *   _validate_input_length, context_len the model's, strata's L); the TP
 *   worker cuts a prompt of >= max_req_input_len = min(context_len - 1,
 *   max_total_num_tokens - 1) tokens to that ("Truncated!!!") and sets
 *   max_new_tokens = min(max_new_tokens, max_req_input_len - 1 - prompt)
 *   (srt/managers/tp_worker.py:134-137, 378-394); a value below 1 still
 *   samples the prefill's token and then finishes (check_finished: output
 *   >= max_new_tokens), so one output token. max_total_num_tokens is the
 *   rank's KV pool in tokens.
 *   trtllm, trtllm-cpp: the C++ request's validation (NVIDIA/TensorRT-LLM
 *   @119c6e60e65e5ecec4e97afdb6ea584f674aed24, cpp/tensorrt_llm/
 *   batch_manager/llmRequest.cpp, LlmRequest::validate): "Prompt length (%d)
 *   exceeds maximum input length (%d)" thrown (the request answered with an
 *   error), and a prompt + max_new_tokens over maxSequenceLen gets
 *   max_new_tokens = maxSequenceLen - prompt with a warning. Taken: max
 *   input length = max sequence length = L (strata has one length; an
 *   engine built with a smaller max_input_len refuses more). The PyTorch
 *   backend's own path (trtllm) is not read; its LLM API checks prompt >
 *   max_num_tokens only without chunked prefill (tensorrt_llm/llmapi/llm.py
 *   _check_arguments), which trtllm-bench's runs do not meet.
 */
#include <math.h>
#include "core/error.h"
#include "hw/coll_impl.h"
#include "serve/serve_cost.h"
#include "serve/serve_eager.h"
#include "serve/serve_engine.h"
#include "serve/serve_frontend.h"
#include "serve/serve_graph_limit.h"
#include "serve/serve_mla_rocm.h"

bool strata_serve_hw_rocm(const strata_hw *hw) { return strata_hw_rocm(hw); }

/* A kernel's name on this platform: the ROCm build's where the engine
 * names one and the hardware is ROCm's, else the CUDA build's (may be NULL). */
static const char *platform_kernel(bool rocm, const char *cuda, const char *rocm_name)
{
    return rocm && rocm_name ? rocm_name : cuda;
}

/* Whether Triton's fused_moe with serve_triton_moe.h's H200 tiles prices the block-FP8 experts here: on Hopper
 * (the tiles' part), on ROCm (vLLM's and SGLang's ROCm builds run the same Triton kernel; its MI300X configs not
 * read) and where the hardware names no generation; not on Ampere (no FP8 MMA) nor Blackwell (SGLang 0.5 runs
 * FlashInfer's TensorRT-LLM MoE there; the Triton kernel's sm100 tiles and rate were not read: ESTIMATE, the
 * grouped path). */
static bool triton_moe_tiles(const strata_hw *hw, bool rocm)
{
    strata_nccl_arch arch;
    return rocm || !strata_hw_nccl_arch(hw, &arch) || arch == STRATA_NCCL_HOPPER;
}

const strata_serve_frontend *strata_serve_engine_frontend(const strata_serve_engine *e)
{
    return strata_serve_frontend_find(strata_serve_engine_row(e)->frontend); /* NULL e: vLLM V1's */
}

const strata_serve_eager *strata_serve_engine_eager(const strata_serve_engine *e)
{
    return e ? strata_serve_eager_find(e->eager) : NULL;
}

const strata_serve_graph_limit *strata_serve_engine_graph_limit(const strata_serve_engine *e)
{
    return e ? strata_serve_graph_limit_find(e->graph_limit) : NULL;
}

bool strata_serve_engine_set_kernels(const strata_serve_engine *e, const strata_hw *hw, strata_serve_cost *cost,
                                     GError **err)
{
    return strata_serve_engine_set_kernels_env(e, hw, cost, false, err);
}

bool strata_serve_engine_set_kernels_env(const strata_serve_engine *e, const strata_hw *hw, strata_serve_cost *cost,
                                         bool prefill_decode, GError **err)
{
    e = strata_serve_engine_row(e);
    bool rocm = strata_serve_hw_rocm(hw);
    if (prefill_decode && (!e->decode_rocm_pd || !rocm)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prefill-decode-attention: expected no --engine (vLLM "
                    "V1, which reads VLLM_V1_USE_PREFILL_DECODE_ATTENTION) on AMD hardware (vendor = amd or "
                    "collectives = rccl: vLLM's ROCm build), got %s on %s hardware",
                    e->name, rocm ? "AMD" : "non-AMD");
        return false;
    }
    /* a row with a decode kernel and no ROCm one is TensorRT-LLM's or TurboMind's, CUDA builds only: its XQA,
     * masked MHA or TurboMind kernel was priced on RCCL hardware at exit 0 */
    if (rocm && e->decode && !e->decode_rocm) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--engine %s: its decode attention kernel %s is CUDA's "
                    "(TensorRT-LLM and LMDeploy TurboMind build for NVIDIA GPUs only), and this hardware is AMD's "
                    "(ROCm: vendor = amd or collectives = rccl): expected a row that runs on ROCm (none, vllm-v0, "
                    "vllm-v0.5, sglang-v0.3, sglang-v0.4, sglang-v0.5, overlap) or NVIDIA hardware",
                    e->name, e->decode);
        return false;
    }
    strata_serve_cost_set_fa3_prefill(cost, e->fa3_prefill);
    strata_serve_cost_set_fa2_attention(cost, e->fa2_attention);
    const char *moe_cfg = platform_kernel(rocm, e->triton_moe_configs, e->triton_moe_configs_rocm);
    strata_serve_cost_set_triton_moe(cost, e->triton_moe && triton_moe_tiles(hw, rocm),
                                     strata_serve_triton_moe_configs_on(moe_cfg, strata_hw_device_name(hw)));
    strata_serve_cost_set_mla_absorb(cost, e->mla_absorb);
    strata_serve_cost_set_mla_prefill_v1(cost, e->mla_prefill_v1);
    const strata_serve_triton_gemm *tg = NULL; /* the ROCm build's block-FP8 Linears (serve_triton_gemm.h) */
    if (rocm && e->gemm_rocm && !(tg = strata_serve_triton_gemm_find(e->gemm_rocm, err)))
        return false;
    strata_serve_cost_set_triton_gemm(cost, tg);
    const strata_serve_fp8_linear *fl = NULL; /* the ROCm build's per-tensor FP8 Linears (serve_fp8_linear.h) */
    if (rocm && e->fp8_linear_rocm && !(fl = strata_serve_fp8_linear_find(e->fp8_linear_rocm, err)))
        return false;
    strata_serve_cost_set_fp8_linear(cost, fl);
    strata_serve_cost_set_fused_moe_bf16(cost, strata_serve_fused_moe_bf16_for(e->fused_moe_bf16, hw));
    const strata_serve_moe_gate *gate = NULL; /* its MoE gate's kernels after the router (serve_moe_gate.h) */
    if (!rocm && e->moe_gate && !(gate = strata_serve_moe_gate_find(e->moe_gate, err))) /* CUDA's (its header) */
        return false;
    strata_serve_cost_set_moe_gate(cost, gate);
    const char *decode = platform_kernel(rocm, e->decode, prefill_decode ? e->decode_rocm_pd : e->decode_rocm);
    if (decode) {
        const strata_serve_decode_kernel *dk = strata_serve_decode_find(decode, err);
        if (!dk)
            return false;
        strata_serve_cost_set_decode(cost, dk);
    }
    if (e->attn_aux) {
        const strata_serve_attn_aux *aux = strata_serve_attn_aux_find(e->attn_aux, err);
        if (!aux)
            return false;
        strata_serve_cost_set_attn_aux(cost, aux);
    }
    if (e->mla_kernels && !rocm) { /* the rows read are the CUDA builds' (FlashMLA, FA3) */
        const strata_serve_mla_kernels *mk = strata_serve_mla_kernels_find(e->mla_kernels, err);
        if (!mk)
            return false;
        /* a row naming a Blackwell variant is a Hopper build's list (SGLang 0.5.6 picks fa3 on Hopper only, the
         * triton backend, not read, below it: server_args.py l. 1310-1324): no list on Ampere or Volta */
        strata_nccl_arch arch;
        bool known = strata_hw_nccl_arch(hw, &arch);
        if (known && arch == STRATA_NCCL_BLACKWELL)
            mk = strata_serve_mla_kernels_on_blackwell(mk);
        else if (known && arch != STRATA_NCCL_HOPPER && mk->blackwell)
            mk = NULL;
        strata_serve_cost_set_mla_kernels(cost, mk);
    } else if (e->mla_kernels_rocm && rocm) { /* the ROCm build's own (serve_mla_rocm.h) */
        const strata_serve_mla_kernels *mk = strata_serve_mla_rocm_find(e->mla_kernels_rocm, err);
        if (!mk)
            return false;
        strata_serve_cost_set_mla_kernels(cost, mk);
    }
    const char *allreduce = platform_kernel(rocm, e->allreduce, e->allreduce_rocm);
    if (allreduce) {
        const strata_serve_allreduce *ar = strata_serve_allreduce_find(allreduce, err);
        if (!ar)
            return false;
        strata_serve_cost_set_allreduce(cost, ar);
    }
    strata_serve_cost_set_vocab_collectives(cost, e->logits_gather, e->logits_to_root, e->embed_allreduce);
    if (e->sampler) {
        const strata_serve_sampler *s = strata_serve_sampler_find(e->sampler, err);
        if (!s)
            return false;
        strata_serve_cost_set_sampler(cost, s);
    }
    return true;
}

bool strata_serve_engine_lengths(const strata_serve_engine *e, uint32_t max_model_len, uint64_t pool_tokens,
                                 uint32_t *prompt, uint32_t *output)
{
    uint64_t len = max_model_len, p = *prompt, o = *output;
    switch (e ? e->lengths : SERVE_LENGTH_VLLM_SERVER) {
    case SERVE_LENGTH_SGLANG_03: {
        if (p >= len)
            return false;
        uint64_t input_max = pool_tokens ? MIN(len - 1, pool_tokens - 1) : len - 1;
        if (p >= input_max)
            p = input_max;
        if (input_max < p + 2)
            o = 1;
        else
            o = MIN(o, input_max - 1 - p);
        break;
    }
    case SERVE_LENGTH_SGLANG_04: {
        uint64_t req_max = pool_tokens ? MIN(len - 1, pool_tokens - 1) : len - 1;
        uint64_t input_max = req_max > 6 ? req_max - 5 : 1;
        if (p > input_max)
            p = input_max;
        o = MIN(o, req_max > p + 1 ? req_max - p - 1 : 1);
        break;
    }
    case SERVE_LENGTH_TRTLLM:
        if (p > len)
            return false;
        if (p + o > len)
            o = len - p;
        break;
    case SERVE_LENGTH_VLLM_SERVER:
    default:
        if (p + o > len)
            return false;
        break;
    }
    if (o < 1)
        o = 1;
    *prompt = (uint32_t)p, *output = (uint32_t)o;
    return true;
}

const char *strata_serve_engine_length_rule(const strata_serve_engine *e)
{
    switch (e ? e->lengths : SERVE_LENGTH_VLLM_SERVER) {
    case SERVE_LENGTH_SGLANG_03:
        return "SGLang 0.3 refuses a prompt of max_model_len tokens or more";
    case SERVE_LENGTH_TRTLLM:
        return "TensorRT-LLM refuses a prompt longer than max_model_len";
    case SERVE_LENGTH_SGLANG_04:
        return "SGLang 0.4 refuses no text prompt (it cuts them)";
    case SERVE_LENGTH_VLLM_SERVER:
    default:
        return "vLLM's OpenAI server refuses prompt + output > max_model_len";
    }
}

double strata_serve_engine_cpu(const strata_serve_engine *e, strata_serve_engine_batch batch)
{
    return e->step_s + e->per_seq_s * (double)batch.requests + e->per_prompt_token_s * (double)batch.prompt_tokens +
           e->per_output_token_s * (double)batch.output_tokens +
           e->per_prefill_token_s * (double)batch.prefill_tokens;
}

double strata_serve_engine_step(const strata_serve_engine *e, double gpu_s, strata_serve_engine_batch batch,
                                bool prefill, uint32_t scheduler_steps)
{
    double cpu = strata_serve_engine_cpu(e, batch);
    switch (e->mode) {
    case SERVE_ENGINE_OVERLAP:
        return fmax(gpu_s, cpu);
    case SERVE_ENGINE_MULTI_STEP:
        return gpu_s + (prefill ? cpu : cpu / (double)(scheduler_steps ? scheduler_steps : 1));
    case SERVE_ENGINE_SYNC:
    default:
        return gpu_s + cpu;
    }
}

/* vLLM V1's six input copies (the input copies' paragraph above): the block
 * table's rows, then input_ids (4 B a token), positions (8), slot_mapping
 * (8), query_start_loc (4 B a request and 4) and seq_lens (4 a request). */
enum { V1_INPUT_COPIES = 6, V1_TABLE_ENTRY_B = 4, V1_TOKEN_B = 4 + 8 + 8, V1_REQUEST_B = 4 + 4 };

double strata_serve_engine_input_copies(const strata_serve_engine *e, const strata_serve_cost *c,
                                        strata_serve_engine_inputs in)
{
    e = strata_serve_engine_row(e);
    double bw = 0, lat = 0;
    strata_serve_cost_host_link(c, &bw, &lat);
    if (!e->input_copies || !in.requests || bw <= 0 || !in.block_size)
        return 0;
    uint64_t width = ((uint64_t)in.max_model_len + in.block_size - 1) / in.block_size;
    double bytes = (double)in.requests * (double)width * V1_TABLE_ENTRY_B + (double)in.tokens * V1_TOKEN_B +
                   (double)in.requests * V1_REQUEST_B + 4.0;
    return V1_INPUT_COPIES * lat + bytes / bw;
}

