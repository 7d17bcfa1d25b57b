/*
 * serve_piecewise.h: the host's chain of a forward that vLLM V1 runs in
 * piecewise CUDA graphs on a GQA/MHA decoder: torch.compile splits the
 * model at the attention op, each piece between two attention ops is a
 * CUDA graph replayed from Python, and the attention op itself runs
 * eagerly between them (vLLM 0.10.1.1: serve_piecewise.c gives the
 * source). Per layer the host pays the attention op's entry, its cache
 * write and its flash call launched through the dispatcher, and the next
 * piece's replay; once a step, the first piece's replay. Each call is
 * priced at its launch kind's host time (serve_mla_kernels.h,
 * strata_serve_mla_host_call_s).
 *
 * The host runs ahead of the GPU (every launch is asynchronous; the
 * step's one synchronisation is after the sampler), so a step takes the
 * longer of its GPU time and this chain; at the published shapes the GPU
 * is longer and the chain changes nothing (docs/serving.md, wave 36).
 *
 * Release: 0.10's default (PIECEWISE). The default row also stands for
 * later V1 releases, where from 0.11 FULL_AND_PIECEWISE is the default
 * (vllm-project/vllm PR #25444): a pure-decode step is one full graph with
 * no eager attention, so this chain overcharges such steps there. It binds
 * only where the GPU step is shorter than the chain (small models at
 * small batch); a version field on the row would separate them (not built).
 *
 * Above the largest captured size (a step of more scheduled tokens than
 * the capture list's last: 512 by default, min(2 x max_num_seqs, 512) at
 * 0.10, the sizes above max_num_batched_tokens dropped) V1 replays no
 * graph: each piece runs Inductor's general-shape code, whose wrapper
 * launches every fused Triton kernel and every cuBLAS GEMM
 * (extern_kernels.mm) from the host. That chain is the layer's Inductor
 * launches plus the same eager attention op and each piece's call
 * (serve_piecewise.c counts them), priced as above; such a step takes the
 * longer of its GPU time and that chain.
 *
 * Invariants: each chain is >= 0, the chain above the captured size is at
 * least the one within it; an MLA model (serve_mla_kernels.c prices its
 * own eager attention op) and ROCm's build (its attention op is V1's
 * Triton kernel, not read here) give 0; the largest captured size is
 * >= 1 where max_num_seqs and max_num_batched_tokens are >= 1.
 */
#ifndef STRATA_SERVE_PIECEWISE_H
#define STRATA_SERVE_PIECEWISE_H

#include <stdbool.h>
#include <stdint.h>
#include "serve/serve_eager.h"
#include "serve/serve_model.h"

/* A layer's host calls and the step's own (serve_piecewise.c cites each). */
strata_serve_eager_calls strata_serve_piecewise_layer_calls(void);
strata_serve_eager_calls strata_serve_piecewise_step_calls(void);
/* The host chain of one piecewise forward of model m (rocm: vLLM's ROCm
 * build, 0; an MLA model, 0). */
double strata_serve_piecewise_host(const strata_serve_model *m, bool rocm);
/* The largest step (scheduled tokens) V1 0.10 replays in a piecewise
 * graph, with no --cuda-graph-sizes: the last size of [1, 2, 4, 8, 16, ...,
 * min(2 x max_num_seqs, 512)] that is <= max_num_batched_tokens. */
uint32_t strata_serve_piecewise_capture_max(uint32_t max_num_seqs, uint32_t max_num_batched_tokens);
/* The step's scheduled tokens, summed over dp attention data-parallel
 * ranks (1: none), above which a rank runs no graph, for the largest
 * captured size `capture`: each DP rank runs its own model runner on its
 * own share, ceil(T / dp) tokens as serve_cost.c splits a step, and
 * ceil(T / dp) > capture exactly where T > dp x capture (serve_piecewise.c
 * cites the runner). */
uint64_t strata_serve_piecewise_step_limit(uint32_t capture, uint32_t dp);
/* A dense GQA layer's host calls above the captured size: its Inductor
 * piece's launches, its attention op's and its piece's call (tp > 1: with
 * its two all-reduces; qk_norm: with the q and k norms' kernels). */
strata_serve_eager_calls strata_serve_piecewise_inductor_layer_calls(uint32_t tp, bool qk_norm);
/* The host chain of one forward above the captured size of model m at tp
 * ranks, moe_layers of its layers MoE (rocm or an MLA model: 0). */
double strata_serve_piecewise_inductor_host(const strata_serve_model *m, uint32_t moe_layers, uint32_t tp,
                                            bool rocm);

#endif
