/*
 * serve_mla_kernels_v07.h: vLLM 0.7.3's V0 DeepSeek-V3/R1 decode layer on CUDA, the kernels it runs in a decode
 * (replayed in its CUDA graph up to 8,192 tokens of context) beyond serve_cost.c's ops, as a row of
 * serve_mla_kernels.h's table (vllm-0.7-v0-mla), read in the vllm-0.7.3 PyPI wheel (serve_mla_kernels_v07.c gives
 * each entry's file and line). The engine row vllm-v0 (serve_engine.c) names it.
 *
 * Invariants: the array has the length its enum gives (checked where it is defined); every entry is replayed in
 * the decode CUDA graph while the step's longest context is at most max_seq_len_to_capture (8,192 by default) and
 * its batch at most 256 (V0 captures the whole model: no host calls); past either the step runs eagerly and its
 * launches are serve_eager.c's vllm-0.7 row, not this table's.
 */
#ifndef STRATA_SERVE_MLA_KERNELS_V07_H
#define STRATA_SERVE_MLA_KERNELS_V07_H

#include "serve/serve_mla_kernels.h"

enum { STRATA_SERVE_MLA_VLLM07_V0_N = 16 };

extern const strata_serve_mla_kernel strata_serve_mla_vllm07_v0[STRATA_SERVE_MLA_VLLM07_V0_N];

#endif
