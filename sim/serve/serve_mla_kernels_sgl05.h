/*
 * serve_mla_kernels_sgl05.h: SGLang 0.5's DeepSeek-V3/R1 decode layer, the
 * kernels it launches beyond serve_cost.c's ops, as two rows of
 * serve_mla_kernels.h's table (sglang-0.5-mla on Hopper, sglang-0.5-mla-sm100
 * on Blackwell), read at the sglang-0.5.6 wheel (the v0.5.6 tag's
 * python/sglang/srt; serve_mla_kernels_sgl05.c gives each entry's file and
 * line). The engine row sglang-v0.5 (serve_engine.c) names them.
 *
 * Invariants: each array has the length its enum gives (checked where it
 * is defined); every entry is replayed in the decode CUDA graph.
 */
#ifndef STRATA_SERVE_MLA_KERNELS_SGL05_H
#define STRATA_SERVE_MLA_KERNELS_SGL05_H

#include "serve/serve_mla_kernels.h"

enum { STRATA_SERVE_MLA_SGLANG05_SM90_N = 6, STRATA_SERVE_MLA_SGLANG05_SM100_N = 8 };

extern const strata_serve_mla_kernel strata_serve_mla_sglang05_sm90[STRATA_SERVE_MLA_SGLANG05_SM90_N];
extern const strata_serve_mla_kernel strata_serve_mla_sglang05_sm100[STRATA_SERVE_MLA_SGLANG05_SM100_N];

#endif
