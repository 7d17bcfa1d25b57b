/*
 * elementwise.c: kernel=elementwise dims=N and kernel=transcendental
 * dims=N: work on the unit's vector unit (a TPU's VPU, a GPU's CUDA cores)
 * or its transcendental unit (a TPU's EUP, a GPU's SFUs).
 *
 * Cost: elementwise, flops= vector ops (absent: N) at the unit's
 * vector_flops (absent: its flops); transcendental, N evaluations at its
 * transcendental_flops (absent: the vector rate); at the same time the
 * operands' bytes (bytes=, or in= and out=; absent: N elements read and N
 * written in the op's dtype) at the achievable rate; the slower of the two,
 * then kernel_launch.
 */
#include "kernel/kernel_rows.h"

void strata_kernel_elementwise_nominal(const strata_kernel_problem *p, double *flops, double *bytes)
{
    double n = (double)p->dims[0];
    *flops = p->has_flops ? p->flops : n;
    *bytes = p->has_bytes ? (double)p->bytes : 2.0 * n * strata_kernel_elem_bytes(p);
}

static double vector_rate(const strata_compute_spec *u)
{
    return u->kernel.vector_flops > 0 ? u->kernel.vector_flops : u->flops;
}

static void vector_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p, strata_kernel_cost *c,
                        double work, double rate, const char *what)
{
    double flops = 0, bytes = 0;
    strata_kernel_elementwise_nominal(p, &flops, &bytes);
    double t = rate > 0 ? work / rate : 0;
    strata_kernel_term_add(c, what, work, "");
    strata_kernel_term_add(c, "rate", rate, "/s");
    strata_kernel_term_add(c, "vector time", t, "s");
    strata_kernel_finish(hw, unit, c, flops, t, bytes, "operand bytes");
}

void strata_kernel_elementwise_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                    strata_kernel_cost *c)
{
    double work = p->has_flops ? p->flops : (double)p->dims[0];
    vector_cost(hw, unit, p, c, work, vector_rate(strata_hw_compute(hw, unit)), "vector ops");
}

void strata_kernel_transcendental_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                       strata_kernel_cost *c)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double rate = u->kernel.transcendental_flops > 0 ? u->kernel.transcendental_flops : vector_rate(u);
    vector_cost(hw, unit, p, c, (double)p->dims[0], rate, "evaluations");
}
