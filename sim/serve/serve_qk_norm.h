/*
 * serve_qk_norm.h: the q and k RMSNorms of a GQA layer in a serving step
 * (issue 45, wave 48), for a model with them (strata_serve_model qk_norm).
 *
 * Two kinds:
 * - Per head (Qwen 3, Gemma 3): each q and k head normed over its own
 *   head_dim, on the rank's heads alone. One pass over the step's q and k
 *   elements, each read and written once in the activations' dtype: what
 *   TensorRT-LLM's fused_qk_norm_rope runs in place over the QKV GEMM's
 *   output (QKNormRoPEAttention.apply_qk_norm_rope, fuse_qk_norm_rope on
 *   by default, tensorrt_llm/_torch/modules/qk_norm_attention.py); vLLM's
 *   Qwen3Attention runs q_norm and k_norm as two kernels over the same
 *   bytes (one launch more, not counted). As before wave 48.
 * - Over the whole projection (qk_norm_tp: MiniMax-M2's qk_norm_type
 *   "per_layer", the only type its model code accepts). SGLang 0.5.7
 *   (its PyPI wheel, sglang/srt/models/minimax_m2.py):
 *   MiniMaxM2Attention.forward_prepare (l. 431-446) splits the QKV output
 *   and runs q = self.q_norm(q.contiguous()), k = self.k_norm(k.contiguous());
 *   q_norm and k_norm are MiniMaxM2RMSNormTP over the whole H x hd and
 *   K x hd (l. 409-419), each rank holding its shard of the weight
 *   (l. 85), whose forward (l. 102-125, under
 *   torch.compile(dynamic=True)) takes the mean square of the rank's shard
 *   in FP32, x.pow(2).mean(dim=-1, keepdim=True), all-reduces it over the
 *   TP group, tensor_model_parallel_all_reduce(variance) / tp_world, then
 *   scales the shard by rsqrt(variance + eps) and its weight. Per norm a
 *   step runs:
 *     the .contiguous() copy of the split's slice, read and written in the
 *       activations' dtype, where the step has more than one row (a
 *       one-row slice is contiguous: PyTorch ignores the stride of a
 *       dimension of size 1, and .contiguous() returns it as it is);
 *     the mean square: the shard read, t FP32 values written;
 *     the all-reduce of t FP32 values (4t bytes) over the tp ranks, by the
 *       engine's all-reduce (the caller's: GroupCoordinator.all_reduce,
 *       sglang/srt/distributed/parallel_state.py l. 613-646, takes the
 *       custom kernel where should_custom_ar holds, else the in-place
 *       path, pynccl (RCCL or NCCL); every custom all-reduce's
 *       should_custom_ar refuses a buffer whose bytes are not a multiple
 *       of 16: SGLang's, custom_all_reduce.py l. 315-321, and aiter's,
 *       the ROCm default by dispatch_custom_allreduce (l. 430-482),
 *       ROCm/aiter v0.1.9 and v0.1.9.post1 (@2d714384, @0011ff44; the
 *       0.5.7 image's own pin not read, the 0.5.8-era rocm.Dockerfile pins
 *       v0.1.9.post1) aiter/dist/device_communicators/custom_all_reduce.py
 *       l. 249-262: under 4 rows the 4t bytes go to the library);
 *     the scaling: the shard and the t values read, the shard written.
 *   The kernels' count is an ESTIMATE: Inductor cannot fuse across the
 *   collective, so the compiled forward is taken as one reduction kernel
 *   before it and one pointwise kernel after it; at tp 1 (no collective)
 *   as one kernel of the shard read and written. Taken for every engine
 *   (only SGLang's file was read).
 *
 * Invariants: a time is finite and >= 0; 0 for no tokens or no norm; the
 * per-head kind's time is the pass serve_cost.c charged before wave 48.
 */
#ifndef STRATA_SERVE_QK_NORM_H
#define STRATA_SERVE_QK_NORM_H

#include <stdbool.h>
#include <stdint.h>
#include "serve/serve_pass.h"

/* An all-reduce of `bytes` on each rank, for a step of `tokens` rows, as
 * the caller's engine runs it (its own kernel or the library). */
typedef double (*strata_serve_allreduce_fn)(const void *ctx, uint64_t tokens, uint64_t bytes);

typedef struct strata_serve_qk_norm_in {
    uint64_t tokens;         /* the step's rows on this rank */
    uint64_t q_cols, k_cols; /* the rank's q and k widths: its heads x head_dim */
    double act_bytes;        /* the activations' bytes an element */
    bool whole;              /* normed over the whole projection (qk_norm_tp) */
    uint32_t tp;             /* ranks the heads are split over (> 1: the mean squares all-reduced) */
} strata_serve_qk_norm_in;

/* The layer's q and k norms for in, priced by pass (a kernel) and ar (an
 * all-reduce; called only where whole and tp > 1), ctx being theirs. */
double strata_serve_qk_norm_time(const strata_serve_qk_norm_in *in, strata_serve_pass_fn pass,
                                 strata_serve_allreduce_fn ar, const void *ctx);

/* Whether a config.json's model_type norms q and k over the whole
 * projection (a row of the table in serve_qk_norm.c); false for NULL. */
bool strata_serve_qk_norm_whole_family(const char *model_type);

#endif
