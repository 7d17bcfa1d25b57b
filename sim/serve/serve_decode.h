/*
 * serve_decode.h: a decode step's attention as an engine's decode kernel
 * runs it, a model chosen by name (the engine's row, serve_engine.h).
 *
 *   flash-attention  the FlashAttention op of models/kernel (serve_cost.c's
 *                    gqa_decode: a KV group's query heads packed as rows,
 *                    the whole batch one op); the default.
 *   xqa              TensorRT-LLM's XQA decode kernel on Hopper with an FP8
 *                    cache (cpp/kernels/xqa/mha_sm90.cu, the warp-specialized
 *                    GMMA kernel that decoderXQAImplJIT picks on sm90 for an
 *                    E4M3 cache, jit::supportConfigQGMMA): one CTA per
 *                    (sequence, KV head, sub-sequence), a sub-sequence being
 *                    multi-block mode's share of a long context
 *                    (computeMultiBlockCount, decoderXQAImplCommon.h).
 *                    A vanilla MHA (one query head a KV head) is refused
 *                    by the JIT's supportConfigCommon, and the precompiled
 *                    cubins have no beam-1 kernel for it: it runs the
 *                    masked MHA, as the mmha row (serve_decode.c xqa_time).
 *   xqa-v0.9         TensorRT-LLM v0.9.0's generation dispatch: xqa where
 *                    its runner takes the shape (8 query heads a KV head,
 *                    head 128 or 256, kv heads x batch x 4 >= SMs), launched
 *                    with multi-block mode off (a CTA per sequence and KV
 *                    head, v0.9.0's default), a CTA's time with an FP8
 *                    cache on a unit with FP8 tensor cores no less than
 *                    its measured SM floor (25.6 cycles a cached token at
 *                    1980 MHz, v0.9.0's sm_90 cubin on an H100 and H200,
 *                    serve_decode.c xqa_v09_token_s), else
 *                    its masked MHA: a CTA per (query head, sequence), the
 *                    KV read once per query head (serve_decode.c).
 *   xqa-v0.7         TensorRT-LLM v0.7.0/v0.7.1's dispatch with
 *                    TRTLLM_ENABLE_XQA=1 (the only switch that builds its XQA
 *                    runner): XQA for fp16 activations, 8 query heads a KV
 *                    head over 1, 2, 4 or 8 KV heads, head 128, a non-paged
 *                    cache (FP16, or E4M3 on a unit with FP8 tensor cores),
 *                    kv heads x batch x 4 >= SMs; the RoPE kernel, then one
 *                    kernel a micro-batch of min(144, SMs) sequences, a CTA
 *                    per (sequence, KV head), a CTA's time as xqa-v0.9's
 *                    (its floor an ESTIMATE for this cubin); else masked MHA.
 *   mmha             TensorRT-LLM's masked MHA for every decode, as v0.6.1
 *                    (no XQA in its tree) runs its FP8-cache rows: a CTA per
 *                    (query head, sequence). With an FP8 cache on a unit
 *                    with FP8 tensor cores its time is its instruction
 *                    issue (92.19 warp instructions a cached token and
 *                    query head, the v0.6.1 kernel compiled for sm_90, at
 *                    4 a clock an SM) or the cache read once a KV group
 *                    (the group's adjacent CTAs share it through L2),
 *                    whichever is longer (serve_decode.c mmha_v06_time);
 *                    else the KV read once per query head (mmha_time).
 *   paged-attention-rocm  vLLM's ROCm paged attention (csrc/rocm/attention.cu,
 *                    0.7.3 and 0.10.0): a workgroup per (sequence, KV head,
 *                    256 context tokens), then a reduce kernel over the
 *                    partitions: 2 launches + 5 dependent memory latencies +
 *                    (K and V of every context token, the queries in and the
 *                    output out, the partials written and read back) at the
 *                    stream rate (serve_decode.c).
 *   triton-unified-attention  vLLM V1's Triton attention on ROCm
 *                    (vllm/attention/ops/triton_unified_attention.py at
 *                    0.9.0.1 and 0.10.0; V1's ROCm default): a program per
 *                    (sequence, KV head) walking its context one 16-token
 *                    block an iteration, or, where those are 128 or fewer,
 *                    16 segments a sequence and a reduce kernel: each
 *                    kernel a launch + the longer of its program's chain of
 *                    dependent memory latencies and its bytes at the stream
 *                    rate (serve_decode.c).
 *   turbomind-v0.1   LMDeploy TurboMind v0.1.0's decoder attention: RoPE,
 *                    the cache append and the attention in one kernel, a CTA
 *                    per (1, 2 or 4 query heads, sequence, split), the cache
 *                    read group / heads-a-CTA times, split-K up to 16 over
 *                    1024-token slices with a reduce kernel (serve_decode.c).
 *
 * XQA's time (serve_decode.c gives the derivation and sources):
 *   blocks  = computeMultiBlockCount(B, kv heads, longest past, SMs)
 *   CTAs    = B x kv heads x blocks, run one CTA per SM (ESTIMATE below)
 *   waves   = ceil(CTAs / SMs)
 *   per CTA = cta_fixed + (its K and V tiles of 64 tokens, at the mean
 *             context, + its query heads in and out) / (stream rate / SMs)
 *   time    = 2 kernel launches (invokeBuildDecoderInfo, then XQA with RoPE
 *             fused) + waves x per CTA
 *
 * Invariants: times finite and >= 0; the same inputs give the same plan.
 */
#ifndef STRATA_SERVE_DECODE_H
#define STRATA_SERVE_DECODE_H

#include <glib.h>
#include <stdint.h>
#include "hw/hw.h"

/* One layer's decodes on one rank. */
typedef struct strata_serve_decode_in {
    uint64_t decodes;   /* sequences, one query token each */
    uint64_t context;   /* their mean context (KV tokens, the new one included) */
    uint64_t longest;   /* the longest one's (TensorRT-LLM's max_past_kv_length + 1); 0: context */
    uint64_t kv_heads;  /* KV heads on the rank */
    uint64_t group;     /* query heads per KV head */
    uint64_t head_dim;
    double kv_bytes;    /* a cache element's bytes (1: FP8) */
    double q_bytes;     /* a query / output element's bytes */
} strata_serve_decode_in;

/* What the kernel does with it (for reports and tests). */
typedef struct strata_serve_decode_plan {
    uint32_t blocks;    /* CTAs per (sequence, KV head): multi-block mode's sub-sequences */
    uint64_t ctas;
    uint64_t waves;
    double cta_s;       /* one CTA's time */
    double time_s;      /* the op's */
} strata_serve_decode_plan;

typedef struct strata_serve_decode_kernel strata_serve_decode_kernel;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_decode_kernel *strata_serve_decode_find(const char *name, GError **err);
/* true: the kernel is the flash-attention op the cost model times itself. */
bool strata_serve_decode_is_flash(const strata_serve_decode_kernel *k);
/* The op's time on unit `unit` of hw (its sms, operand memory's bandwidth,
 * stream_efficiency and kernel_launch), the plan in *plan if not NULL. Not
 * for the flash-attention row (0). */
double strata_serve_decode_time(const strata_serve_decode_kernel *k, const strata_hw *hw, uint32_t unit,
                                const strata_serve_decode_in *in, strata_serve_decode_plan *plan);
#endif
