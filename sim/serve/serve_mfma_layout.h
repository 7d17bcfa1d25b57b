/*
 * serve_mfma_layout.h: how Triton's AMD backend spreads a tl.dot's BLOCK_M x
 * BLOCK_N output over a program's wavefronts on CDNA (MFMA) parts, and how
 * many of them compute the same output (issue 45, wave 45: vLLM's fused_moe
 * at its default tile on MI300X).
 *
 * The source (triton-lang/triton@658b5b2b, third_party/amd/lib/
 * TritonAMDGPUTransforms/AccelerateAMDMatmul.cpp; which Triton the ROCm
 * images of vLLM 0.11.0 ship was not read: ESTIMATE, this rule; older
 * copies of the file, with a fixed 32 x 32 shapePerWarp, give the same
 * {4, 1} for the 16 x 32 tile below):
 *   chooseMfmaInstruction: with no matrix_instr_nonkdim forced (vLLM's
 *   default configs set none), min(BLOCK_M, BLOCK_N) >= 32 takes the
 *   32 x 32 MFMA, 16..31 the 16 x 16 one, below 16 no MFMA (FMA dot);
 *   warpsPerTile, "Case 3: Regular cases" (a plain dot, not a chained
 *   attention dot): ret = {1, 1}; while ret[0] x ret[1] < num_warps: if
 *   BLOCK_M / (2 mDim) / ret[0] >= BLOCK_N / nDim / ret[1] then (ret[0] <
 *   BLOCK_M / mDim ? ret[0] *= 2 : ret[1] *= 2) else ret[1] *= 2; and if
 *   ret[1] x nDim > BLOCK_N the result is {ret[1], ret[0]}: warpsPerCTA.
 * A layout wider than the tile along a dimension broadcasts: the wavefronts
 * past BLOCK_M / mDim (or BLOCK_N / nDim) hold copies of the same output
 * and run the same MFMAs on the same operands. vLLM's 16 x 32 x 64 default
 * small tile (fused_moe.py get_default_config, M <= E) with Triton's
 * default num_warps 4: the 16 x 16 MFMA, {1,1} -> {1,2} -> {1,4}, 4 x 16 =
 * 64 > 32 so warpsPerCTA {4, 1}: along M 4 wavefronts over one 16-row
 * block, along N one wavefront over both 16-column blocks: one wavefront's
 * worth of distinct output, 4 replicas. 64 x 64 x 32 ({2, 2} of 32 x 32)
 * and 64 x 128 x 128 ({1, 4} of 32 x 32) have none. On NVIDIA the same
 * rule runs with mma.sync's 16 x 8 (warps {1, 4} over 16 x 32: distinct):
 * no replicas, which is why this belongs to ROCm's rows only.
 *
 * Invariants: pure functions; 1 <= replicas <= num_warps; 1 where no MFMA
 * is chosen (the FMA dot) or an argument is 0.
 */
#ifndef STRATA_SERVE_MFMA_LAYOUT_H
#define STRATA_SERVE_MFMA_LAYOUT_H

#include <stdint.h>

/* The wavefronts of a num_warps program that compute the same BLOCK_M x BLOCK_N output (the rule above). */
uint32_t strata_serve_mfma_replicas(uint32_t block_m, uint32_t block_n, uint32_t num_warps);

#endif
