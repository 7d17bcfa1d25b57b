/*
 * coll_impl.h: the collective implementation a hardware model declares
 * ([interconnect] collectives = nccl | xla | ideal, hw.h) and what it
 * makes of a collective whose trace names no algorithm.
 *
 *   ideal  today's choice (spmd.c): direct for all-to-all and
 *          collective-permute, torus over several axes that are
 *          neighbours on the machine, else ring
 *   nccl   algo=nccl for all-reduce, all-gather and reduce-scatter: the
 *          algorithm, protocol and channels NCCL's tuning model picks
 *          (nccl_tuning.h), and NCCL's fixed cost per collective
 *   xla    bidir-torus for all-reduce, all-gather and reduce-scatter (a
 *          bidirectional ring along each axis of the group: on one axis
 *          bidir-ring's schedule)
 * Invariant: pure functions of the model and the collective.
 */
#ifndef STRATA_SPMD_COLL_IMPL_H
#define STRATA_SPMD_COLL_IMPL_H

#include <glib.h>
#include "hw/hw.h"
#include "spmd/collective.h"

/* The implementation's default algorithm for `kind`, or
 * STRATA_ALGO_DEFAULT where it leaves the choice to ideal. */
strata_algo strata_coll_impl_default(const strata_hw *hw, strata_op_kind kind);
/* For algo=nccl: fills the shape's nccl fields, channels and launch_s
 * from NCCL's tuning model for the model's GPUs (the shape's algo, kind,
 * dims and in_bytes set). False with err (STRATA_ERROR_INPUT) when the
 * model declares no collectives = nccl or NCCL runs no such collective. */
bool strata_coll_impl_tune(const strata_hw *hw, strata_coll_shape *shape, GError **err);

#endif
