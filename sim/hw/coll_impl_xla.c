/*
 * coll_impl_xla.c: the xla row of the collective implementations
 * (coll_impl.h): XLA's collectives on a TPU slice.
 *
 * No parameters. pick: bidir-torus for all-reduce, all-gather and
 * reduce-scatter (a bidirectional ring along each axis of the group: on
 * one axis bidir-ring's schedule); for an all-reduce over a group that
 * spans several scale-up domains (TPU slices: multislice), hierarchical
 * (inside each slice over ICI, across the slices over the DCN); ideal's
 * choice for the others. No
 * tune: the schedule is the algorithm's, at the links' own costs.
 */
#include "hw/coll_impl.h"

/* Whether the group of device 0 spans more than one domain. */
static bool spans_domains(const strata_hw *hw, const strata_mesh *mesh, uint32_t mask)
{
    uint32_t domain = strata_hw_domain(hw), n = mesh ? strata_mesh_group_size(mesh, mask) : 1;
    uint32_t first = n > 1 ? strata_mesh_member(mesh, mask, 0, 0) / domain : 0;
    for (uint32_t r = 1; r < n; r++)
        if (strata_mesh_member(mesh, mask, 0, r) / domain != first)
            return true;
    return false;
}

static const char *xla_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    if (!strata_coll_reducing(kind))
        return NULL;
    return kind == STRATA_OP_ALL_REDUCE && spans_domains(hw, mesh, mask) ? "hierarchical" : "bidir-torus";
}

const strata_coll_impl strata_coll_impl_xla = {
    .name = "xla",
    .pick = xla_pick,
};
