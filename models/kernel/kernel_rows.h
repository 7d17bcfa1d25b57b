/*
 * kernel_rows.h: the hooks of the kernel table's rows (kernel.c), one
 * file each, and the matrix engines they share (matrix.c). Not for use
 * outside models/kernel/.
 */
#ifndef STRATA_KERNEL_ROWS_H
#define STRATA_KERNEL_ROWS_H

#include "kernel/kernel.h"

/* gemm.c */
strata_kernel_cost_fn strata_kernel_gemm_cost;
strata_kernel_nominal_fn strata_kernel_gemm_nominal;
/* grouped_gemm.c */
strata_kernel_cost_fn strata_kernel_grouped_gemm_cost;
/* flash_attention.c */
strata_kernel_cost_fn strata_kernel_flash_fwd_cost, strata_kernel_flash_bwd_cost;
strata_kernel_nominal_fn strata_kernel_flash_fwd_nominal, strata_kernel_flash_bwd_nominal;
/* elementwise.c */
strata_kernel_cost_fn strata_kernel_elementwise_cost, strata_kernel_transcendental_cost;
strata_kernel_nominal_fn strata_kernel_elementwise_nominal;

/* Whether p is a block-scaled FP8 product (block_scaled with 8-bit operands). */
bool strata_kernel_is_block_scaled(const strata_kernel_problem *p);

/* matrix.c: the time of `batch` independent products M x K x N on the
 * unit's matrix engine (systolic array or CTA tiles), at its peak for
 * dtype times its matrix efficiency; terms appended to c. to_memory: the
 * product is written out by the kernel's epilogue (a GEMM; not the blocks
 * of a fused kernel such as flash attention, which stay on chip), and its
 * K loop shares the CTA's pipeline stages with the kernel's operand
 * stream of stream_s seconds (tiles with gemm_pipeline_smem; 0: none), the
 * time returned then the pair's (at least the longer of the two). */
double strata_kernel_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double elem_bytes,
                                 bool to_memory, double stream_s, uint64_t batch, uint64_t m, uint64_t k, uint64_t n,
                                 strata_kernel_cost *c);
/* The same for a block-scaled FP8 GEMM (TensorRT-LLM's and DeepGEMM's
 * 1x128 by 128x128 kernels, matrix.c): no split-K, K in whole 128-element
 * blocks, each block's promotion of the tile's partial sums on the CUDA
 * cores after its MMAs, the activations' scales in the operand feed. */
double strata_kernel_block_scaled_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype,
                                              double elem_bytes, double stream_s, uint64_t batch, uint64_t m,
                                              uint64_t k, uint64_t n, strata_kernel_cost *c);
/* The same for a grouped GEMM (`batch` products of one launch, an MoE
 * layer's experts; written out): the unit's grouped_cta_tiles (default its
 * cta_tiles) over the transposed product (tile M along n, tile N along
 * the m rows), no split-K, K in whole k-blocks of grouped_k_tile bytes,
 * grouped_group_switch for each group the busiest CTA starts; block_scaled:
 * the block-scaled kernel's promotion and scales as above, and no switch
 * (one TMA descriptor per operand for every group). */
double strata_kernel_grouped_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double elem_bytes,
                                         bool block_scaled, uint64_t batch, uint64_t m, uint64_t k, uint64_t n,
                                         strata_kernel_cost *c);
/* Fills c's totals: nominal flops, the unit's busy time, the HBM bytes
 * (over the unit's stream efficiency) and its kernel_launch; appends the
 * bytes, memory time and launch terms (`bytes_what` names the bytes). */
void strata_kernel_finish(const strata_hw *hw, uint32_t unit, strata_kernel_cost *c, double flops, double busy_s,
                          double bytes, const char *bytes_what);
/* The same with the bytes streamed at `eff` of the operand memory's
 * bandwidth (a GEMM's gemm_stream_efficiency). */
void strata_kernel_finish_at(const strata_hw *hw, uint32_t unit, strata_kernel_cost *c, double flops, double busy_s,
                             double bytes, const char *bytes_what, double eff);
/* The achievable rate of the unit's operand memory, bytes/s. */
double strata_kernel_stream_rate(const strata_hw *hw, uint32_t unit);

#endif
