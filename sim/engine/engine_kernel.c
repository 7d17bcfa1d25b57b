/*
 * engine_kernel.c: the engine's one hook into the kernel cost models
 * (models/kernel/kernel.h), for a compute op that names a kernel=.
 *
 * When an op is read (either pass), its kernel's cost on its unit goes into
 * its extra (and so onto the tape): the work as flops at the unit's peak for
 * the op's dtype (compute_s x that peak), the operand memory's bytes (the
 * kernel's traffic over the unit's stream efficiency) and the fixed time.
 * engine_feed.c's finish_op() puts the first two in the bound op in place of
 * its flops and bytes, so run_compute() executes and streams them as any
 * compute (sharing the unit and the memory's port with what runs beside
 * it), then waits the fixed time.
 *
 * Ops without kernel=, with time=, or without a unit are left alone: their
 * time is what it was before kernels existed.
 */
#include "engine/engine_internal.h"
#include <math.h>
#include "kernel/kernel.h"

void engine_kernel_extra(const strata_hw *hw, const strata_bound_op *op, engine_op_extra *x)
{
    const strata_op *in = op->op;
    if (!hw || op->kind != STRATA_OP_COMPUTE || !in->kernel || in->has_time || op->unit == STRATA_BIND_NONE)
        return;
    strata_kernel_problem p;
    const strata_kernel_model *k = strata_kernel_problem_of(in, op->dtype, op->bytes, &p);
    if (!k) /* the binder refuses unknown names */
        return;
    strata_kernel_cost c;
    strata_kernel_cost_of(k, hw, op->unit, &p, &c);
    double peak = strata_hw_compute_flops(hw, op->unit, op->dtype);
    x->kernel = true;
    x->kernel_flops = c.compute_s * peak;
    x->kernel_bytes = (uint64_t)llround(c.bytes);
    x->kernel_s = c.fixed_s;
}
