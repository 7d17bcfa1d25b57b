/*
 * serve_triton_gemm.h: a block-scaled FP8 model's dense Linear GEMMs as
 * aiter's Triton kernel runs them on gfx942 (issue 45, wave 37).
 *
 * SGLang 0.5.6 on ROCm with aiter (SGLANG_USE_AITER, the ROCm images'
 * setting) runs every block-FP8 Linear (apply_w8a8_block_fp8_linear,
 * python/sglang/srt/layers/quantization/fp8_utils.py l. 51 and 63 of the
 * 0.5.6 wheel, as wave 36 read them) through
 * aiter.ops.triton.gemm_a8w8_blockscale, not the CK kernel. Not here: the
 * routed experts (a fused MoE kernel, serve_cost.c's experts path) and
 * DeepSeek's MoEGate, a plain bf16 weight, not a quantized Linear.
 *
 * What the kernel does (ROCm/aiter v0.1.7.post1 @44610f47, the tag
 * SGLang's rocm.Dockerfile pins for gfx942 on ROCm 7, AITER_COMMIT; the
 * 0.5.6 image's own pin was not read, this is the nearest tag read):
 *   aiter/ops/triton/gemm_a8w8_blockscale.py l. 63-64, 104-110: config =
 *   _get_config(M, N, K); grid = NUM_KSPLIT * cdiv(M, BLOCK_SIZE_M) *
 *   cdiv(N, BLOCK_SIZE_N) programs;
 *   aiter/ops/triton/_triton_kernels/gemm_a8w8_blockscale.py l. 285-328,
 *   _get_config: the file {dev}-GEMM-A8W8_BLOCKSCALE.json (dev "MI300X"
 *   for gfx942, utils/_triton/arch_info.py l. 5), a per-(N, K) file where
 *   one exists (none for MI300X at that tag: only MI350X's), and of its
 *   keys (small, medium_M32, ..., xlarge) the "any" entry, the only one
 *   configs/gemm/MI300X-GEMM-A8W8_BLOCKSCALE.json has: BLOCK_SIZE_M 128,
 *   BLOCK_SIZE_N 128, BLOCK_SIZE_K 128, GROUP_SIZE_M 1, num_warps 4,
 *   num_stages 2, waves_per_eu 2, matrix_instr_nonkdim 16, kpack 2,
 *   NUM_KSPLIT 1 (no split-K, no reduce kernel) at every M, N and K;
 *   the kernel's l. 154-155: rows past M wrap (offs_am % M), so a program
 *   of a decode's few rows still runs the whole 128 x 128 tile's MFMAs;
 *   l. 179-201: its K loop, cdiv(K, BLOCK_SIZE_K) steps, each loads a
 *   BLOCK_M x 128 slice of A, a 128 x BLOCK_N slice of W (FP8) and their
 *   scales and runs accumulator += tl.dot(a, b) * a_scale[:, None] *
 *   b_scale[None, :]: the block-scale dequantization on the fresh product,
 *   two multiplies and an add per accumulator element per K step.
 *
 * Its time (strata_serve_triton_gemm_time): the programs run in waves of
 * one a CU; a program's K step is its MFMA work (2 x 128 x 128 x 128) at
 * ONE CU's FP8 rate (the unit's flops.f8 over its CUs: on MI300X the
 * datasheet's 2,614.9 TFLOP/s over 304 CUs, 8 XCDs of 38 active CUs each,
 * ROCm's "AMD Instinct MI300 series microarchitecture" page) or its
 * operand bytes at the CU's share of the memory bandwidth (the bandwidth
 * over the programs that run at once; a program's bytes are the K step's
 * distinct A rows, W columns and scales over the grid's programs, the
 * caches serving repeats), whichever binds, plus the
 * dequantization's three FP32 vector operations per accumulator element
 * at the CU's vector rate (flops.f32 over its CUs; each operation issues
 * in an FMA's slot, two of the peak's flops). ESTIMATE: the dequantization
 * does not overlap the step's MFMAs (4 warps, one wavefront per SIMD; the
 * product is scaled before it is added, as serve_triton_moe.h reads the
 * same loop). The caller takes the slower of this and the whole-GPU
 * roofline (the gemm kernel row's compute and bytes).
 *
 * Invariants: the table ends with a NULL name; a time is 0 for an empty product or a unit without CUs.
 */
#ifndef STRATA_SERVE_TRITON_GEMM_H
#define STRATA_SERVE_TRITON_GEMM_H

#include <glib.h>
#include <stdint.h>

typedef struct strata_serve_triton_gemm strata_serve_triton_gemm;

/* One product's launch and time under a row. */
typedef struct strata_serve_triton_gemm_time {
    uint64_t programs;  /* cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N) (NUM_KSPLIT 1) */
    uint64_t waves;     /* cdiv(programs, CUs) */
    uint64_t k_steps;   /* cdiv(K, BLOCK_K) */
    double mma_s;       /* one K step's MFMA work at one CU's FP8 rate */
    double feed_s;      /* a program's share of a K step's distinct bytes at the CU's share of the bandwidth */
    double dequant_s;   /* one K step's block-scale dequantization at one CU's vector rate */
    double program_s;   /* k_steps x (max(mma_s, feed_s) + dequant_s) */
    double s;           /* waves x program_s */
} strata_serve_triton_gemm_time;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_triton_gemm *strata_serve_triton_gemm_find(const char *name, GError **err);
const char *strata_serve_triton_gemm_name(const strata_serve_triton_gemm *g);

/* An m x k x n product (Y = X W^T, X m x k, W n x k, FP8 with 1 x 128 and
 * 128 x 128 scales) under row g on cus CUs whose FP8 matrix and FP32
 * vector peaks are f8_peak and f32_peak (FLOP/s, the whole GPU's) and
 * whose memory streams mem_bw bytes per second; t zeroed where any of
 * them is 0. */
void strata_serve_triton_gemm_time_of(const strata_serve_triton_gemm *g, uint64_t m, uint64_t k, uint64_t n,
                                      uint32_t cus, double f8_peak, double f32_peak, double mem_bw,
                                      strata_serve_triton_gemm_time *t);

#endif
