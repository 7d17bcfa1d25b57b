/*
 * grouped_gemm.c: kernel=grouped-gemm dims=BxMxKxN: B products
 * C_b[M,N] = A_b[M,K] B_b[K,N] in one grouped launch, as an MoE layer's
 * experts run in TensorRT-LLM's CUTLASS fused MoE (moe_kernels.cu's gemm1
 * and gemm2 through MoeGemmRunner; sim/serve/serve_cost.c).
 *
 * Cost: gemm.c's, but the matrix engine's time is the grouped kernel's
 * (matrix.c, strata_kernel_grouped_matmul_time): its own CTA tiles, no
 * split-K, K run in whole k-blocks, each product transposed (the tile's M
 * along N, its N along the M rows), and a cost per group each CTA starts
 * (grouped_group_switch). Nominal: gemm.c's (2 B M K N flops;
 * A and B read once, C written once, 8-bit products' C in bf16).
 * Invariant: on a unit without grouped_cta_tiles, grouped_k_tile and
 * grouped_group_switch it differs from kernel=gemm only by taking no
 * split-K and tiling the transposed product.
 */
#include "kernel/kernel_rows.h"

void strata_kernel_grouped_gemm_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                     strata_kernel_cost *c)
{
    const uint64_t *d = p->dims;
    uint64_t b = p->n_dims == 4 ? d[0] : 1, m = d[p->n_dims - 3], k = d[p->n_dims - 2], n = d[p->n_dims - 1];
    double flops = 0, bytes = 0;
    strata_kernel_gemm_nominal(p, &flops, &bytes);
    strata_kernel_term_add(c, "flops (2BMKN)", flops, "FLOP");
    double mm = strata_kernel_grouped_matmul_time(hw, unit, p->dtype, strata_kernel_elem_bytes(p), strata_kernel_is_block_scaled(p), b, m,
                                                 k, n, c);
    strata_kernel_term_add(c, "matrix engine time (grouped)", mm, "s");
    strata_kernel_finish(hw, unit, c, flops, mm, bytes, "HBM bytes (A, B read, C written once)");
}
