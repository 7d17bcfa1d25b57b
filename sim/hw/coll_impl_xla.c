/*
 * coll_impl_xla.c: the xla row of the collective implementations
 * (coll_impl.h): XLA's collectives on a TPU slice.
 *
 * No parameters. pick: bidir-torus for all-reduce, all-gather and
 * reduce-scatter (a bidirectional ring along each axis of the group: on
 * one axis bidir-ring's schedule); ideal's choice for the others. No tune:
 * the schedule is the algorithm's, at the links' own costs.
 */
#include "hw/coll_impl.h"

static const char *xla_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    (void)hw;
    (void)mesh;
    (void)mask;
    return strata_coll_reducing(kind) ? "bidir-torus" : NULL;
}

const strata_coll_impl strata_coll_impl_xla = {
    .name = "xla",
    .pick = xla_pick,
};
