/*
 * serve_allreduce.h: the tensor-parallel all-reduce of a serving step as
 * an engine runs it, a model chosen by name (the engine's row,
 * serve_engine.h).
 *
 *   nccl         NCCL's all-reduce as the hardware's collective row times
 *                it (serve_cost.c's collective()); the default.
 *   trtllm-auto  TensorRT-LLM's own AllReduce op, strategy AUTO, as its
 *                v1.0-era allreduceOp.cpp selects it (no fusion or
 *                RESIDUAL_RMS_NORM): NCCL above the IPC workspace
 *                (getMaxRequiredWorkspaceSize: 16e6 bytes at <= 2 ranks,
 *                8e6 above); else MIN_LATENCY at <= 2 ranks, and above
 *                2 ranks MIN_LATENCY up to 128 tokens
 *                (ALLREDUCE_AUTO_HEURISTIC_MIN_LATENCY_THRESHOLD_TOKEN_NUM's
 *                default), NCCL beyond; MIN_LATENCY runs the one-shot
 *                kernel up to kOneShotMaxToken (128) tokens, the two-shot
 *                kernel beyond (allReduceFusionKernels.h).
 *   vllm-custom  vLLM's custom all-reduce (0.6.0, which SGLang 0.3 calls):
 *                at 2, 4, 6 or 8 ranks up to 8 MiB (max_size), the
 *                1-stage kernel at 2 ranks or below 512 KiB (<= 4 ranks)
 *                / 256 KiB (<= 8 ranks), the 2-stage kernel above; NCCL
 *                beyond 8 MiB or at other rank counts. Outside a CUDA
 *                graph (in->eager) the input is first copied into the
 *                registered IPC buffer.
 *   vllm-custom-rocm  the same kernels as vLLM's ROCm builds run them
 *                (ROCm/vllm 0.7.3 @b309ea79 and 0.10.0 @040de12d): below
 *                16 MiB (max_size 2 x 8192 x 1024, inp_size < max_size), the
 *                same 1-stage / 2-stage switch; NCCL's (RCCL's) beyond.
 *
 * The kernels' times (serve_allreduce.c gives the sources), B the bytes
 * per rank, n ranks, launch the hardware's kernel_launch, lat the peer
 * route's latency, link its narrowest bandwidth x 4/5 (SM stores' 128-byte
 * NVLink payloads), stream the device memory's stream rate, k the most
 * peers whose data shares one link (link_peers: n-1 through a switch, where
 * every peer's data enters a rank by its one port; 1 on a full mesh such as
 * MI300X's xGMI, each peer on its own link, the n-1 transfers in parallel):
 *   one-shot  launch + lat + k B / link + (n+2) B / stream
 *   two-shot  launch + 2 lat + 2 k/n B / link + 3 B / stream
 *   1-stage   launch + 4 lat + k B / link + 2 B / stream
 *   2-stage   launch + 6 lat + 2 k/n B / link + (1 + 3/n) B / stream
 *   (vLLM's kernels read their peers' data: each phase of loads begins
 *   with a round trip, two latencies, besides a flight per barrier)
 *   (eager)   + launch + 2 B / stream (vllm-custom's staging copy)
 * TensorRT-LLM's one-shot and two-shot kernels run the layer's fused
 * residual add + RMSNorm (+ FP8 quantization) in their epilogue
 * (runFusionAllReduce); when its op falls back to NCCL, those run as
 * kernels of their own after it (fallbackRunSubsequentOps): the plan's
 * fuses_norm says which.
 *
 * Invariants: times finite and >= 0; the same inputs give the same plan.
 */
#ifndef STRATA_SERVE_ALLREDUCE_H
#define STRATA_SERVE_ALLREDUCE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* ONESHOT / TWOSHOT: TensorRT-LLM's one-shot / two-shot kernels, vLLM's
 * 1-stage / 2-stage ones. */
typedef enum { SERVE_AR_NCCL, SERVE_AR_ONESHOT, SERVE_AR_TWOSHOT } strata_serve_ar_strategy;

/* One all-reduce over the tp ranks of one node. */
typedef struct strata_serve_ar_in {
    uint32_t ranks;
    uint64_t tokens;  /* rows of the buffer (TensorRT-LLM's seq_len) */
    uint64_t bytes;   /* per rank */
    double launch_s;  /* a kernel's launch (the hardware's kernel_launch) */
    double link_bw, link_lat; /* the route to a peer: narrowest link, summed latency */
    double stream_bw; /* device memory at the kernels' stream rate */
    bool eager;       /* the step runs outside a CUDA graph (its buffers not registered) */
    uint32_t link_peers; /* the most peers whose data to or from a rank crosses one link of its routes
                          * (serve_links.h ar_peers_per_link): n-1 through a switch, 1 on a full
                          * mesh; 0 is read as n-1 */
} strata_serve_ar_in;

typedef struct strata_serve_ar_plan {
    strata_serve_ar_strategy strategy;
    double time_s;    /* the kernel's; 0 under SERVE_AR_NCCL (the caller times NCCL) */
    bool fuses_norm;  /* the kernel also runs the residual add, RMSNorm and FP8 quantization after it
                       * (TensorRT-LLM's fusion ops); false under NCCL and for vLLM's kernels */
} strata_serve_ar_plan;

typedef struct strata_serve_allreduce strata_serve_allreduce;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_allreduce *strata_serve_allreduce_find(const char *name, GError **err);
/* The strategy the row picks for in and, unless it is NCCL, its time. NULL: NCCL. */
strata_serve_ar_plan strata_serve_allreduce_plan(const strata_serve_allreduce *a, const strata_serve_ar_in *in);
/* The most peers whose data shares one link of a rank's routes, as
 * link_peers above reads it: link_peers, or n-1 where it is 0 (through a
 * switch port). */
static inline double strata_serve_ar_peers_per_link(uint32_t link_peers, uint32_t ranks)
{
    return link_peers ? (double)link_peers : ranks - 1.0;
}

#endif
