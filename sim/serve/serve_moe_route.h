/*
 * serve_moe_route.h: the routing-side arithmetic of a served MoE layer and
 * the block-scaled FP8 input quantization (issue 45, wave 33): how many
 * distinct experts a step's tokens reach when a router picks them (not
 * aiconfigurator's balanced assignment), TensorRT-LLM's expert-map
 * kernels as passes, and the bytes of one per-token-group FP8
 * quantization (per_token_group_quant_fp8 / fp8_quantize_1x128) that
 * vLLM, SGLang and TensorRT-LLM run before every 128 x 128 block-scaled
 * linear. Pure functions of their arguments; serve_cost.c times each pass
 * as one kernel.
 *
 * Invariants: strata_serve_routed_experts(e, k, t) lies in
 * [min(k, e), min(e, t k)] for t >= 1 and is 0 for t = 0; a pass list
 * has 1 to 3 passes; bytes are non-negative.
 */
#ifndef STRATA_SERVE_MOE_ROUTE_H
#define STRATA_SERVE_MOE_ROUTE_H

#include <stdint.h>

/* The routed experts' kernels (serve_cost.c experts_grouped), for an MoE
 * layer on t tokens (every rank's under
 * attention DP), kernel by kernel as TensorRT-LLM's CUTLASS fused MoE runs
 * them (the engine of the MoE serving cases and of aiconfigurator's
 * fused-MoE rows; cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/
 * moe_kernels.cu, CutlassMoeFCRunner::runMoe and gemm1):
 *   1. the expert maps (strata_serve_expert_map_passes): fusedBuildExpertMapsSortFirstToken,
 *      one kernel up to 256 tokens with top_k in {1, 2, 4, 6, 8}, else
 *      three (block and global prefix sums, merge);
 *   2. expandInputRowsKernel: every routed row gathered into expert order,
 *      routed x hidden read and written in the GEMMs' input dtype (FP8
 *      under 8-bit weights), and per routed row its source index read and
 *      its router scale read and written permuted (4 bytes each);
 *   3. computeStridesTmaWarpSpecialized: one small kernel (64 bytes an
 *      expert);
 *   4. gemm1, a grouped GEMM: `active` products of `per` rows each, one
 *      grouped-gemm kernel (an expert's rows padded to the CTA tile's
 *      token extent, its N: the kernel runs transposed, matrix.c's tile
 *      quantization; the grouped kernel's own CTA tiles, no split-K, K in
 *      whole k-blocks, a descriptor switch per expert a CTA starts: the
 *      hardware's grouped_cta_tiles, grouped_k_tile_bytes and
 *      grouped_group_switch);
 *   5. doActivation: reads the routed x up bf16 GEMM output, writes
 *      routed x w in the GEMMs' input dtype;
 *   6. gemm2, grouped the same way;
 *   7. finalizeMoeRoutingKernel: reads routed x hidden bf16, writes the
 *      t x hidden sum over top_k; per routed row it reads the expert id,
 *      the permuted row's index and the router scale (4 bytes each). The
 *      runner may instead fuse this sum into gemm2's epilogue (FINALIZE:
 *      a cudaMemsetAsync of the output, then red.global.add of each routed
 *      row, sm90_visitor_scatter.hpp); the autotuner picks between the two
 *      by timing them, which no source fixes, so strata keeps this one.
 * Every one of these kernels launches whatever the dtype (FP8 per-tensor
 * runs the same list: no computeFP8DequantScale on the TMA path).
 * routed = t x top_k over active = min(experts, routed) experts (balanced
 * routing, aiconfigurator's), or in a served step (routed_by_router) the
 * experts a router reaches (serve_moe_route.h strata_serve_routed_experts);
 * per = ceil(routed / active). Served with block-scaled FP8 weights the
 * activation writes bf16 and gemm2's input is quantized per 1 x 128 group
 * by a kernel of its own (vLLM v0.8.4 fused_moe.py fused_experts_impl:
 * torch.ops._C.silu_and_mul into intermediate_cache2, then
 * invoke_fused_moe_kernel's per_token_group_quant_fp8 of it; SGLang 0.4.5
 * the same). vLLM's fused_experts (Triton) gathers the rows inside its
 * GEMM instead of step 2 and has no step 3. */

/* One kernel over `elements` elements moving `bytes`. */
typedef struct strata_serve_route_pass {
    uint64_t elements;
    double bytes;
} strata_serve_route_pass;

/* The distinct experts, of e, that t tokens reach when each picks k
 * distinct ones and every expert is picked with the same probability
 * k / e, independently across tokens: e (1 - (1 - k / e)^t), rounded to
 * the nearest whole expert and held in [min(k, e), min(e, t k)]. */
uint64_t strata_serve_routed_experts(uint64_t e, uint64_t k, uint64_t t);

/* TensorRT-LLM's expert maps of t tokens' routed rows over e experts with
 * top k (moe_kernels.cu, runMoe's prologue): the passes, written into
 * out[3]; returns their count (1 or 3). */
uint32_t strata_serve_expert_map_passes(uint64_t t, uint64_t k, uint64_t e, strata_serve_route_pass out[3]);

/* The bytes of one per-token-group FP8 quantization of a rows x k input:
 * each element read in `act` bytes and written in `in` bytes, and one
 * 4-byte float scale per row and group of `block` columns (ceil(k /
 * block) a row). 0 when block is 0. */
double strata_serve_block_quant_bytes(uint64_t rows, uint64_t k, uint32_t block, double act, double in);

#endif
