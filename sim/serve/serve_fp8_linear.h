/*
 * serve_fp8_linear.h: an FP8 Linear layer with per-tensor scales (dtype f8,
 * no weight_block) as an engine's ROCm build runs it around the GEMM that
 * serve_cost.c prices: the input's quantization that every Linear
 * launches for itself, the width the MLP's activation is written in, and
 * the rows its GEMM runs. Looked up by name from an engine row's
 * fp8_linear_rocm (serve_engine.h) where the hardware's collectives are
 * RCCL's, or from --fp8-linear-rocm (serve_args.c); without one serve_cost.c charges TensorRT-LLM's pattern (a
 * quantization before QKV and gate_up only, the activation writing FP8).
 *
 * serve_fp8_linear.c cites each mechanism (vLLM 0.6.2's
 * apply_fp8_linear, torch._scaled_mm branch; AMD's fork ROCm/vllm from
 * v0.6.3+rocm, its norms and activation writing FP8).
 *
 * Invariants: a row's GEMM runs at least the step's tokens as rows
 * (strata_serve_fp8_linear_rows(r, m) >= m, == m for r NULL or m 0); a
 * quantization's bytes are >= 0 and 0 for an empty input; the table ends
 * with a NULL name.
 */
#ifndef STRATA_SERVE_FP8_LINEAR_H
#define STRATA_SERVE_FP8_LINEAR_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "serve/serve_skinny_gemm.h"

typedef struct strata_serve_fp8_linear {
    const char *name;
    const char *what;     /* one line: the release and the branch it stands for */
    uint32_t min_rows;    /* the GEMM's rows: max(tokens, min_rows) (0: tokens) */
    bool every_linear;    /* each Linear quantizes its own input (o_proj and down_proj too) */
    bool wide_activation; /* the MLP's activation writes the activations' dtype, not FP8 */
    bool inputs_fp8;      /* the norms, the activation and attention write each Linear's input in FP8: none quantizes */
    strata_serve_skinny_gemm skinny; /* the fork's skinny GEMMs at few rows (serve_skinny_gemm.h; zero: none) */
} strata_serve_fp8_linear;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_fp8_linear *strata_serve_fp8_linear_find(const char *name, GError **err);
/* --fp8-linear-rocm NAME: the row called name, or NULL with an input error (exit 2) naming the option and the
 * known rows. */
const strata_serve_fp8_linear *strata_serve_fp8_linear_option(const char *name, GError **err);
/* The rows a Linear's GEMM runs for m tokens (r NULL: m). */
uint64_t strata_serve_fp8_linear_rows(const strata_serve_fp8_linear *r, uint64_t m);
/* A Linear's m x k x n product under the row (r NULL: `library`, the hipBLASLt time): its skinny GEMM's time where
 * the row runs one (serve_skinny_gemm.h; fp8: a per-tensor FP8 weight, else a 16-bit one such as the LM head). */
double strata_serve_fp8_linear_gemm(const strata_serve_fp8_linear *r, const strata_hw *hw, bool fp8, uint64_t m,
                                    uint64_t k, uint64_t n, double library);
/* The bytes of one input quantization of t x k elements (one kernel): read in act_bytes, written in FP8 (1 byte). */
double strata_serve_fp8_linear_quant_bytes(uint64_t t, uint64_t k, double act_bytes);

#endif
