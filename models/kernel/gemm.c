/*
 * gemm.c: kernel=gemm dims=MxKxN (or BxMxKxN): C[M,N] = A[M,K] B[K,N], B
 * independent products (a batched matmul, XLA's dot with a batch
 * dimension), as the library or compiler runs it in one kernel.
 *
 * Cost: the matrix engine's time for the products (matrix.c: padding,
 * passes and fill on a systolic array; CTA tiles, waves and split-K on
 * tensor cores) and, at the same time, the operands' HBM traffic: A and B
 * read once, C written once, in the op's dtype (C of 8-bit products in
 * bf16: strata_kernel_out_bytes) (the compulsory traffic;
 * re-reads of a block are served from VMEM or L2), at the rate a library
 * GEMM streams its operands (the unit's gemm_stream_efficiency of the
 * memory's bandwidth, default its stream_efficiency: a memory-bound GEMM
 * at small M streams its weights slower than a copy, docs/hardware.md;
 * with gemm_stream_curve, the fraction at its operand bytes: a smaller GEMM
 * streams slower, sim/hw/hw_stream_curve.c);
 * the slower of the two; then the unit's kernel_launch. On a tiled unit
 * with gemm_pipeline_smem the two overlap only through the CTA's pipeline
 * stages (matrix.c): the matrix engine time is then the pair's, longer
 * than either near the ridge, and the unit busy for all of it.
 * Block-scaled FP8 (block_scaled with 8-bit operands; DeepSeek-style 1 x
 * 128 activation and 128 x 128 weight scales): matrix.c's block-scaled
 * kernel (no split-K, K in 128-element blocks, each block's promotion on
 * the CUDA cores), and the scales' bytes, a float per 1 x 128 of A and per
 * 128 x 128 of B, with the operands'.
 * Nominal: 2 B M K N flops and those bytes.
 */
#include "kernel/kernel_rows.h"
#include <math.h>

typedef struct gemm_dims {
    uint64_t b, m, k, n;
} gemm_dims;

static gemm_dims dims_of(const strata_kernel_problem *p)
{
    const uint64_t *d = p->dims;
    if (p->n_dims == 4)
        return (gemm_dims){d[0], d[1], d[2], d[3]};
    return (gemm_dims){1, d[0], d[1], d[2]};
}

void strata_kernel_gemm_nominal(const strata_kernel_problem *p, double *flops, double *bytes)
{
    gemm_dims g = dims_of(p);
    double b = (double)g.b, m = (double)g.m, k = (double)g.k, n = (double)g.n;
    *flops = 2.0 * b * m * k * n;
    double e = strata_kernel_elem_bytes(p);
    *bytes = b * ((m * k + k * n) * e + m * n * strata_kernel_out_bytes(e));
    if (strata_kernel_is_block_scaled(p)) { /* a float per 1 x 128 of A and per 128 x 128 of B */
        double kb = ceil(k / 128.0);
        *bytes += b * 4.0 * (m * kb + ceil(n / 128.0) * kb);
    }
}

void strata_kernel_gemm_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p, strata_kernel_cost *c)
{
    gemm_dims g = dims_of(p);
    double flops = 0, bytes = 0;
    strata_kernel_gemm_nominal(p, &flops, &bytes);
    strata_kernel_term_add(c, "flops (2BMKN)", flops, "FLOP");
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    const strata_kernel_spec *ks = &u->kernel;
    double eff = strata_hw_gemm_stream_efficiency(ks, bytes); /* gemm_stream_curve where the unit gives one */
    const strata_memory_spec *mem = strata_hw_memory(hw, u->operands);
    double stream_s = mem && mem->bandwidth > 0 ? bytes / (mem->bandwidth * eff) : 0;
    double mm = strata_kernel_is_block_scaled(p)
                    ? strata_kernel_block_scaled_matmul_time(hw, unit, p->dtype, 1.0, stream_s, g.b, g.m, g.k, g.n, c)
                    : strata_kernel_matmul_time(hw, unit, p->dtype, strata_kernel_elem_bytes(p), true, stream_s, g.b,
                                                g.m, g.k, g.n, c);
    strata_kernel_term_add(c, "matrix engine time", mm, "s");
    strata_kernel_finish_at(hw, unit, c, flops, mm, bytes, "HBM bytes (A, B read, C written once)", eff);
}
