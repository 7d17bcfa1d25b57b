/*
 * serve_engine.h: the serving engine's CPU time per step, a model chosen
 * by name (--engine NAME): what the engine's host code does between two
 * forward passes (the scheduler, preparing the next step's inputs,
 * sampling's host side, output processing and detokenisation) and how
 * much of it the GPU waits for.
 *
 * A row gives the CPU time of one step as a fixed part and a part per
 * request in the batch, and how the engine runs it against the GPU:
 *   SYNC        the GPU waits for all of it: step = gpu + cpu
 *               (vLLM v0 before 0.6, SGLang before 0.4);
 *   MULTI_STEP  vLLM 0.6's multi-step scheduling (--num-scheduler-steps
 *               N, vllm-project/vllm PR #7000): scheduling and input
 *               preparation once per N decode steps, so a decode-only step
 *               pays cpu / N; a step with prefill tokens runs alone and
 *               pays all of it (the PR's "force single step when there
 *               are prefill requests");
 *   OVERLAP     the engine prepares step n+1 while the GPU runs step n
 *               (SGLang 0.4's overlap scheduler, TensorRT-LLM's
 *               overlap scheduler, vLLM v1's async scheduling): step =
 *               max(gpu, cpu).
 * A row also names what the engine runs on the GPU (its decode attention
 * kernel, the kernels around its attention, its TP all-reduce, whether its
 * prefill attention is FlashAttention-3's), set on the step's cost model
 * by strata_serve_engine_set_kernels, and its scheduler, CUDA graphs and
 * pool rule; no --engine is the default row, vLLM v1 (serve_engine.c).
 * Every figure cites its source or says ESTIMATE with its meaning
 * (serve_engine.c: the table of rows and their lookup; serve_engine_apply.c:
 * the functions that act on a row).
 *
 * Invariants: a step's time is >= its GPU time and finite; `none` adds
 * nothing (the simulation as before engines were modelled).
 */
#ifndef STRATA_SERVE_ENGINE_H
#define STRATA_SERVE_ENGINE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"

typedef enum { SERVE_ENGINE_SYNC, SERVE_ENGINE_MULTI_STEP, SERVE_ENGINE_OVERLAP } serve_engine_mode;

/* What the engine does with a request longer than the model allows, L being
 * the model's max_model_len (serve_engine_apply.c cites each):
 *   VLLM_SERVER  vLLM's OpenAI server: prompt + output > L is refused (400);
 *   SGLANG_03    SGLang 0.3: prompt >= L refused; a prompt >= min(L, pool
 *                tokens) - 1 cut to that, its output to what leaves one more
 *                token of room (at least the one the prefill samples);
 *   TRTLLM       TensorRT-LLM's LlmRequest::validate: prompt > L refused,
 *                prompt + output > L gets its output cut to L - prompt;
 *   SGLANG_04    SGLang 0.4: a text prompt is never refused; with R =
 *                min(L, pool tokens) - 1, a prompt over R - 5 is cut to
 *                R - 5 and its output to R - prompt - 1 (at least 4). */
typedef enum {
    SERVE_LENGTH_VLLM_SERVER,
    SERVE_LENGTH_SGLANG_03,
    SERVE_LENGTH_TRTLLM,
    SERVE_LENGTH_SGLANG_04
} serve_length_rule;

/* Which of a rank's device memory outside the KV pool (the CUDA context, NCCL's buffers, the engine's own
 * all-reduce buffers, cuBLAS's workspace) the engine's own accounting charges to its pool, by when it measures
 * its baseline (serve_holdings.h gives each rule's sources; strata_serve_hold_rule_name its name). */
typedef enum {
    SERVE_HOLD_UNSET = 0,   /* no rule: a row built outside the table (zeroed); strata_serve_holdings_of refuses it */
    SERVE_HOLD_VLLM_V0,     /* charged: NCCL, custom all-reduce, cuBLAS */
    SERVE_HOLD_VLLM_V1,     /* charged: cuBLAS */
    SERVE_HOLD_SGLANG,      /* charged x mem_fraction_static: context, NCCL, custom all-reduce */
    SERVE_HOLD_TRTLLM,      /* charged (then x the free fraction): every part */
    SERVE_HOLD_NONE,        /* nothing charged (accounting not read) */
} strata_serve_hold_rule;

typedef struct strata_serve_engine {
    const char *name;
    serve_engine_mode mode;
    double step_s;    /* CPU seconds per step, whatever the batch */
    double per_seq_s; /* CPU seconds per request in the step's batch */
    const char *what; /* one line for --help and reports */
    const char *scheduler; /* the engine's scheduling policy (serve_scheduler.h; NULL: vllm-v1) */
    const char *decode;    /* its decode attention kernel (serve_decode.h; NULL: flash-attention) */
    const char *decode_rocm; /* its decode attention kernel where the hardware's collectives are RCCL's (its
                              * ROCm build; NULL: decode) */
    const char *decode_rocm_pd; /* its decode attention kernel on RCCL hardware under vLLM V1's
                                 * VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1 (--prefill-decode-attention;
                                 * NULL: the engine takes no such setting) */
    const char *allreduce; /* its TP all-reduce (serve_allreduce.h; NULL: nccl) */
    const char *sampler;   /* its decoder's kernels over the sampled logits (serve_sampler.h; NULL: none) */
    const char *allreduce_rocm; /* its TP all-reduce where the hardware's collectives are RCCL's (its ROCm
                                 * build; NULL: allreduce) */
    uint32_t graph_max;    /* decode-only steps of more requests run outside a CUDA graph
                            * (0: none does; every step with prefill tokens does) */
    uint32_t graph_align;  /* captured decode batches 1, 2, 4, then multiples of this up to
                            * graph_max (0 there: max_num_seqs rounded up): a decode-only
                            * step pads to the next one; 0: no padding unless
                            * --cuda-graph-batch-sizes */
    const char *graph_limit; /* its CUDA graph limit by memory and TP, its capture list and padding
                              * (serve_graph_limit.h; NULL: graph_max and graph_align) */
    uint32_t seq_capture;  /* a decode-only step whose longest context (prompt + tokens so far) is above this runs
                            * eagerly, unpadded (vLLM V0's max_seq_len_to_capture, --max-seq-len-to-capture;
                            * serve_sched.c cites it); 0: no such limit */
    bool pool_of_free;     /* the KV pool is gpu_memory_utilization of the memory left after the
                            * weights and the profile run (TensorRT-LLM's free_gpu_memory_fraction);
                            * false: of the whole device, less those (vLLM's gpu_memory_utilization) */
    const char *frontend;  /* its server hops (serve_frontend.h; NULL: none priced) */
    const char *eager;     /* its eager prefill's host calls (serve_eager.h; NULL: none counted) */
    const char *attn_aux;  /* the kernels it runs around GQA attention (serve_attn_aux.h; NULL:
                            * one fused QKV preprocessing pass over the prefill tokens) */
    const char *mla_kernels; /* an MLA model's layer kernels beyond serve_cost.c's ops, and which it launches
                              * eagerly (serve_mla_kernels.h; NULL: none) */
    const char *mla_kernels_rocm; /* the same where the hardware's collectives are RCCL's (its ROCm build on
                                   * gfx942: serve_mla_rocm.h; NULL: none) */
    const char *gemm_rocm; /* its block-FP8 Linear layers' kernel in its ROCm build on gfx942
                            * (serve_triton_gemm.h; NULL: the gemm row) */
    const char *fp8_linear_rocm; /* its per-tensor FP8 Linear layers' quantizations and padded rows in its ROCm
                                  * build (serve_fp8_linear.h; NULL: serve_cost.c's default pattern) */
    bool fa3_prefill;      /* its GQA/MHA prefill attention moves HBM bytes as FlashAttention-3 does
                            * (vLLM v1's FLASH_ATTN backend on Hopper: each KV head's K and V once,
                            * serve_cost.h's strata_serve_cost_set_fa3_prefill); false: the
                            * flash-attention row's count */
    bool fa2_attention;    /* its GQA/MHA attention is FlashAttention-2's own kernels, entered as vLLM
                            * 0.6's FLASH_ATTN backend enters them (serve_cost.h's
                            * strata_serve_cost_set_fa2_attention); false: the engine's own kernel */
    bool triton_moe;       /* its block-scaled routed experts run Triton's fused_moe kernel (vLLM, SGLang:
                            * serve_cost.h's strata_serve_cost_set_triton_moe); false: TensorRT-LLM's grouped GEMM */
    const char *triton_moe_configs; /* with triton_moe, its release's config files (serve_triton_moe.h; NULL:
                                     * vllm@645d18fa's H200 file) */
    const char *triton_moe_configs_rocm; /* the same where the collectives are RCCL's (NULL: triton_moe_configs) */
    const char *fused_moe_bf16; /* its unquantized routed experts' Triton fused_moe release: its tuned files and
                                 * default tile, and its fused shared experts (serve_fused_moe_bf16.h, on the
                                 * row's part: Ampere, Blackwell or ROCm; NULL: the grouped-GEMM row) */
    const char *moe_gate; /* its MoE routing kernels beyond one fused top-k kernel (serve_moe_gate.h; NULL: none) */
    bool mla_absorb;       /* an MLA model's decodes run V0's absorbed weights W_Q_UK and W_UV_O (serve_cost.h's
                            * strata_serve_cost_set_mla_absorb); false: q_b, W_UK, W_UV and o_proj */
    bool mla_prefill_v1;   /* an MLA model's prefill chunks run vLLM V1's MLACommonImpl kernels around the flash op
                            * (serve_cost.h's strata_serve_cost_set_mla_prefill_v1) */
    bool window_blocks;    /* the paged pool frees a sliding-window layer's blocks wholly outside its
                            * window (vLLM v1's hybrid allocator, serve_pool.c); false: every layer keeps
                            * every token */
    double per_prompt_token_s; /* CPU seconds per prompt token of each request in the step's batch
                                * (Python lists the engine copies whole every step) */
    double per_output_token_s; /* and per token each has generated before the step */
    double per_prefill_token_s; /* CPU seconds per prompt token the step prefills (its input lists
                                 * built in Python and made tensors before the step launches) */
    bool overlap_lag;      /* a request that samples its last token is still in the next step's batch,
                            * one decode more whose token is dropped, before its slot and blocks are
                            * freed (TensorRT-LLM's overlap scheduler: serve_engine.c) */
    bool async_output;     /* vLLM V0's async output processor (0.6.0 on), single-step only: a step's outputs
                            * are processed inside the next step, after its host work, so a token reaches the
                            * server's output that long after its step and a finished request runs one decode
                            * more (overlap_lag's); serve_sched.c */
    bool recv_lag;         /* OVERLAP only: the loop receives new requests when it forms a step, which it does
                            * while the GPU runs the step before, once that step's predecessor's results are
                            * processed: a request joins step n+1 only if it arrived by step n's start + its
                            * CPU time (at most step n's length), else step n+2 (SGLang 0.4's
                            * event_loop_overlap: serve_engine.c); false: by step n+1's start */
    bool logits_gather;    /* with tp > 1 (no attention DP) the LM head's vocabulary-split logits are
                            * all-gathered (gather_output: serve_cost.h) */
    bool embed_allreduce;  /* with tp > 1 (no attention DP) the vocabulary-split embedding's output is
                            * all-reduced (serve_cost.h) */
    bool logits_to_root;   /* with logits_gather, the logits are gathered to rank 0 only by p2p sends
                            * (torch.distributed.gather: vLLM v0), not all-gathered (serve_cost.h) */
    serve_length_rule lengths; /* its rule for a request longer than the model allows (above) */
    bool context_passes;   /* a step's prompt tokens, each prompt's last excepted, run as separate forward
                            * passes (sub-batches of at most max_num_batched_tokens) before one decoder pass
                            * of every request's one token (TurboMind's ContextDecode then Generate:
                            * serve_sched_turbomind.c); false: one pass of all the step's tokens */
    /* its share of device memory for weights and KV pool at tp ranks when --gpu-memory-utilization is not
     * given (SGLang's mem_fraction_static by TP; NULL: strata's 0.9) */
    double (*default_utilization)(uint32_t tp);
    bool pool_of_static;   /* the KV pool is that share of the device less the weights alone: no profile
                            * run's activations taken first (SGLang's profile_max_num_token) */
    /* its running requests at most for a KV pool of pool_tokens a rank and max_model_len when --max-num-seqs
     * is not given (SGLang's max_running_requests; NULL: the scheduler's default) */
    uint32_t (*default_max_running)(uint64_t pool_tokens, uint32_t max_model_len);
    bool input_copies;     /* before each forward its inputs cross the host link on the forward's stream as
                            * vLLM V1's _prepare_inputs copies them: the persistent batch's block table in
                            * whole rows of max_model_len / block_size entries a request, then five arrays
                            * of the step's tokens and requests (strata_serve_engine_input_copies) */
    bool piecewise;        /* it runs a GQA/MHA forward in piecewise CUDA graphs, its attention op eagerly
                            * between them: a step takes at least that host chain (serve_piecewise.h) */
    strata_serve_hold_rule hold_rule; /* what its memory accounting charges to the KV pool of the rank's
                                       * holdings outside it (serve_holdings.h); every row sets it (UNSET:
                                       * refused, the twenty-fourth hardening pass) */
    bool tensorrt_runtime; /* it runs a TensorRT engine (TensorRT-LLM's C++ runtime), not PyTorch: no PyTorch
                            * cuBLAS handle's workspace among its holdings (serve_holdings.c) */
} strata_serve_engine;

typedef struct strata_serve_cost strata_serve_cost;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_engine *strata_serve_engine_find(const char *name, GError **err);
/* Row e, or the default row (vllm-v1) where e is NULL (no --engine). */
const strata_serve_engine *strata_serve_engine_row(const strata_serve_engine *e);
/* The server hops row e names (e NULL: the default row's, vllm-v1's hops;
 * a row naming none: NULL) and the eager prefill's host calls (e NULL or a
 * row naming none: NULL). */
const struct strata_serve_frontend *strata_serve_engine_frontend(const strata_serve_engine *e);
const struct strata_serve_eager *strata_serve_engine_eager(const strata_serve_engine *e);
/* The CUDA graph limit row e names (serve_graph_limit.h; e NULL or naming none: NULL). */
const struct strata_serve_graph_limit *strata_serve_engine_graph_limit(const strata_serve_engine *e);
/* Whether the hardware stands for vLLM's ROCm build: it is AMD's
 * (strata_hw_rocm: [hardware] vendor = amd, or collectives = rccl where
 * the file gives no vendor; mi300x.ini, of one device, says amd). */
bool strata_serve_hw_rocm(const strata_hw *hw);
/* Sets the row's kernels on a step's cost model: FlashAttention-3's prefill
 * bytes, its decode kernel, the kernels around its attention, its TP
 * all-reduce (each left at the cost model's default where the row names
 * none; where hw's device collectives are RCCL's, the row's allreduce_rocm
 * and decode_rocm if it names them). e NULL (no --engine): the default row,
 * vLLM v1 (FlashAttention-3 prefill; on RCCL hardware vLLM's custom
 * all-reduce and V1's Triton unified attention),
 * which --engine cannot name. False, with err set,
 * when the row names a kernel no table has. */
bool strata_serve_engine_set_kernels(const strata_serve_engine *e, const strata_hw *hw, strata_serve_cost *cost,
                                     GError **err);
/* The same, with vLLM V1's VLLM_V1_USE_PREFILL_DECODE_ATTENTION set
 * (prefill_decode: the row's decode_rocm_pd on RCCL hardware). False, with
 * err set, where prefill_decode is asked of a row without decode_rocm_pd
 * (every --engine: only vLLM V1 reads it) or of hardware that is not
 * RCCL's (vLLM V1 on CUDA runs FLASH_ATTN, which does not read it). */
bool strata_serve_engine_set_kernels_env(const strata_serve_engine *e, const strata_hw *hw, strata_serve_cost *cost,
                                         bool prefill_decode, GError **err);
/* Applies the row's length rule (e NULL: vLLM v1's, the OpenAI server's) to
 * one request of *prompt and *output tokens, max_model_len L and a KV pool
 * of pool_tokens per rank: false when the engine refuses it, else true with
 * *prompt and *output as the engine runs them (each >= 1). */
bool strata_serve_engine_lengths(const strata_serve_engine *e, uint32_t max_model_len, uint64_t pool_tokens,
                                 uint32_t *prompt, uint32_t *output);
/* The rule in one line, for the warning on refused requests. */
const char *strata_serve_engine_length_rule(const strata_serve_engine *e);
/* A step's batch as the engine's CPU time sees it. */
typedef struct strata_serve_engine_batch {
    uint32_t requests;      /* requests in the step */
    uint64_t prompt_tokens; /* their prompts' tokens, summed */
    uint64_t output_tokens; /* the tokens they had generated before the step, summed */
    uint64_t prefill_tokens; /* the prompt tokens the step computes (its chunks of more than one) */
} strata_serve_engine_batch;

/* The engine's CPU seconds for a step of this batch (the row's fixed,
 * per-request and per-token parts). */
double strata_serve_engine_cpu(const strata_serve_engine *e, strata_serve_engine_batch batch);
/* A step's time from its GPU time, its batch, whether it has prefill
 * tokens, and N for MULTI_STEP (>= 1). */
double strata_serve_engine_step(const strata_serve_engine *e, double gpu_s, strata_serve_engine_batch batch,
                                bool prefill, uint32_t scheduler_steps);

/* What a step sends its device before the forward: requests (the rows of
 * one rank's persistent batch), tokens (those it computes), and the run's
 * max_model_len and block_size. */
typedef struct strata_serve_engine_inputs {
    uint32_t requests;
    uint64_t tokens;
    uint32_t max_model_len;
    uint32_t block_size;
} strata_serve_engine_inputs;

/* The seconds a step's input copies hold the forward's stream, over the
 * pinned host link of cost (strata_serve_cost_host_link): for a row with
 * input_copies (e NULL: vLLM v1, the default row, which has it), six
 * copies of one link latency each plus requests x ceil(max_model_len /
 * block_size) x 4 B of block table, tokens x 20 B and requests x 8 + 4 B
 * over the link's bandwidth (serve_engine_apply.c gives the source); 0 for a row
 * without it, a step of no request, or hardware with no pinned host link. */
double strata_serve_engine_input_copies(const strata_serve_engine *e, const strata_serve_cost *c,
                                        strata_serve_engine_inputs in);

#endif
