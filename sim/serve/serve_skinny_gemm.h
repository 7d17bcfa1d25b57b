/*
 * serve_skinny_gemm.h: the skinny GEMMs of AMD's ROCm/vllm fork
 * (csrc/rocm/skinny_gemms.cu), which replace hipBLASLt for a Linear of
 * very few rows: wvSplitKQ for a per-tensor FP8 weight (fp8_rows rows or
 * fewer, K a multiple of 16) and wvSplitK for an unquantized 16-bit one
 * (rows or fewer, more than 8 outputs, K a multiple of 8: the LM head of
 * an FP8 checkpoint). Each is one kernel on a grid of one workgroup a CU
 * that streams the weight once, split along K; it is timed as the unit's
 * kernel_launch plus its bytes (the weight, the input row(s) and the
 * 16-bit output) at `efficiency` of the operand memory's bandwidth.
 * serve_skinny_gemm.c cites the conditions and the rate.
 *
 * Invariants: a time is > 0 only where the kernel runs (NULL, 0 rows,
 * more rows than the row allows, a K it refuses: the fallback is
 * returned unchanged); the time is finite and >= the launch.
 */
#ifndef STRATA_SERVE_SKINNY_GEMM_H
#define STRATA_SERVE_SKINNY_GEMM_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"

typedef struct strata_serve_skinny_gemm {
    uint32_t fp8_rows;  /* wvSplitKQ up to this many rows of a per-tensor FP8 weight (0: never) */
    uint32_t rows;      /* wvSplitK up to this many rows of a 16-bit weight (0: never) */
    double efficiency;  /* fraction of the operand memory's bandwidth the kernels stream at (ESTIMATE) */
} strata_serve_skinny_gemm;

/* The m x k x n product (the weight k x n, fp8: 1 byte an element, else 2) as the fork runs it: the skinny
 * kernel's time where s takes it on hardware hw (unit 0), else `fallback` (the library GEMM's time). */
double strata_serve_skinny_gemm_or(const strata_serve_skinny_gemm *s, const strata_hw *hw, bool fp8, uint64_t m,
                                   uint64_t k, uint64_t n, double fallback);

#endif
