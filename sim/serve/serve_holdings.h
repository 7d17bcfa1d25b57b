/*
 * serve_holdings.h: the device memory a serving engine's rank holds besides the weights, the profile run's
 * activations and the KV pool (the CUDA context, NCCL's buffers, the custom all-reduce's buffers, cuBLAS's
 * workspace), and which of it the engine's own memory accounting charges to its KV pool.
 *
 * Each part is sized from its library's source (serve_holdings.c cites them); whether it enters the pool's
 * rule depends on when the engine measures its baseline:
 *   - vLLM V0 (vllm-v0, vllm-v0.5): Worker.init_device reads init_gpu_memory after set_device and before
 *     init_worker_distributed_environment, and determine_num_available_blocks charges init - free after the
 *     profile run (0.4.0-0.6.2) or the non-torch increase since that baseline (0.6.5 on): NCCL, the custom
 *     all-reduce and cuBLAS's workspace are charged, the CUDA context is not.
 *   - vLLM V1 0.11 (no --engine, none, overlap): init_worker_distributed_environment runs before init_snapshot,
 *     so NCCL and the custom all-reduce sit in the baseline; cuBLAS's workspace (taken in the profile run) is
 *     charged.
 *   - SGLang: total_gpu_memory is the free memory after the distributed init (context, NCCL, custom all-reduce
 *     taken), the pool mem_fraction_static of it less what the weights took: those parts scaled by the fraction.
 *   - TensorRT-LLM (trtllm, trtllm-cpp*): the fraction of the memory free once the runtime is up: every part.
 *   - LMDeploy TurboMind: not read, nothing charged.
 * Invariant: counted <= the sum of the parts; a part is 0 where it does not apply (tp 1: no NCCL nor
 * all-reduce buffers; AMD hardware: no CUDA context nor cuBLAS figure; hardware naming no SMs: nothing).
 * Pure functions, no state.
 */
#ifndef STRATA_SERVE_HOLDINGS_H
#define STRATA_SERVE_HOLDINGS_H

#include <stdint.h>
#include "hw/hw.h"
#include "serve/serve_engine.h"

/* strata_serve_hold_rule, the rules above, is serve_engine.h's: each engine row names its own (hold_rule). */

typedef struct strata_serve_holdings {
    strata_serve_hold_rule rule;
    uint64_t context_bytes;   /* the CUDA context's device reservation (ESTIMATE, serve_holdings.c) */
    uint64_t nccl_bytes;      /* NCCL's ring buffers, every channel's three protocols */
    uint64_t allreduce_bytes; /* the engine's own all-reduce buffers (vLLM's custom AR or TensorRT-LLM's) */
    uint64_t cublas_bytes;    /* PyTorch's cuBLAS workspace, one handle and stream */
    uint64_t counted_bytes;   /* what the engine's rule charges to the pool, before any fraction */
    uint64_t total_bytes;     /* the four parts summed: what the rank holds outside the pool */
} strata_serve_holdings;

/* The holdings of one rank of engine row e (NULL: vLLM V1) at tp ranks on hw; false with err for a row whose
 * hold_rule is SERVE_HOLD_UNSET (built outside the table). */
bool strata_serve_holdings_of(const strata_serve_engine *e, const strata_hw *hw, uint32_t tp,
                              strata_serve_holdings *out, GError **err);
/* The rule's name ("unset", "vllm-v0", "vllm-v1", "sglang", "trtllm", "none"). */
const char *strata_serve_hold_rule_name(strata_serve_hold_rule r);

#endif
